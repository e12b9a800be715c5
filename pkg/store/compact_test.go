package store

import (
	"testing"
	"time"
)

func TestCompactionBoundsTheLog(t *testing.T) {
	const events, updates = 50, 100_000
	dir := t.TempDir()
	clk := newClock()
	s := open(t, dir, Options{}, clk)
	// 100,000 fdatasyncs would make this a disk benchmark; durability is
	// covered elsewhere.
	s.sync = noSync
	var maxSize int64
	want := map[string]int32{}
	for u := range updates {
		i := u % events
		c := int32(u/events + 1)
		write(t, s, event(name(i), c, t0.Add(time.Duration(u)*time.Millisecond)))
		want[name(i)] = c
		maxSize = max(maxSize, s.size)
	}
	final := fileSize(t, logPath(dir))
	t.Logf("%d updates of %d events: %d compactions, log peaked at %d bytes, ends at %d bytes, live set %d bytes (threshold %d)",
		updates, events, s.compactions, maxSize, final, s.liveBytes, int64(DefaultMaxLogBytes))
	if maxSize >= DefaultMaxLogBytes {
		t.Errorf("log reached %d bytes, over the %d threshold", maxSize, DefaultMaxLogBytes)
	}
	// A small live set is compacted long before the hard threshold.
	if maxSize > DefaultMaxLogBytes/8+maxRecordBytes {
		t.Errorf("log reached %d bytes though nearly all of it was dead", maxSize)
	}
	if s.compactions == 0 {
		t.Error("never compacted")
	}
	equalCounts(t, "live set", s.Events(), want)
	closeStore(t, s)

	s = open(t, dir, Options{}, clk)
	equalCounts(t, "after reopen", s.Events(), want)
}

func TestCompactionAtMaxLogBytesWithLargeLiveSet(t *testing.T) {
	// 400 events of ~600 bytes are 240 KiB live, over MinLogBytes: the log
	// must not compact on every write, and must stay below twice the live
	// set.
	dir := t.TempDir()
	s := open(t, dir, Options{MaxLogBytes: MinLogBytes}, newClock())
	s.sync = noSync
	var maxSize int64
	for u := range 4000 {
		write(t, s, event(name(u%400), int32(u/400+1), t0.Add(time.Duration(u)*time.Millisecond)))
		maxSize = max(maxSize, s.size)
	}
	t.Logf("live %d bytes, peak %d bytes, %d compactions", s.liveBytes, maxSize, s.compactions)
	if maxSize > 2*s.liveBytes+maxRecordBytes {
		t.Errorf("log peaked at %d bytes, over twice the live set (%d)", maxSize, s.liveBytes)
	}
	if s.compactions > 4000/400 {
		t.Errorf("%d compactions for 4000 writes: compacting too eagerly", s.compactions)
	}
}

func TestMaxEventsEvictsOldest(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	s := open(t, dir, Options{MaxEvents: 10}, clk)
	// name(0) is written first but happened last: eviction follows
	// lastTimestamp, not write order, so names 1 to 5 go.
	write(t, s, event(name(0), 1, t0.Add(30*time.Minute)))
	for i := 1; i < 15; i++ {
		write(t, s, event(name(i), 1, t0.Add(time.Duration(i)*time.Minute)))
	}
	// Each time the live set passes 10, the oldest go until 9 are left:
	// names 1 to 6 in pairs. An evicted Event written again comes back as
	// the youngest.
	write(t, s, event(name(2), 2, t0.Add(20*time.Minute)))
	want := map[string]int32{name(0): 1, name(2): 2}
	for i := 7; i < 15; i++ {
		want[name(i)] = 1
	}
	equalCounts(t, "live set", s.Events(), want)
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "ReadEvents while open", got, want)
	closeStore(t, s)

	s = open(t, dir, Options{MaxEvents: 10}, clk)
	equalCounts(t, "after reopen", s.Events(), want)
	got, err = ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "ReadEvents after reopen", got, want)
}

// The bound holds while the agent runs, for the log that podwatch events
// reads too, not only from the next Open; and a steady stream of new
// Events does not rewrite the log on every write.
func TestMaxEventsHoldsInTheLogWhileRunning(t *testing.T) {
	dir := t.TempDir()
	const max, writes = 50, 500
	s := open(t, dir, Options{MaxEvents: max}, newClock())
	for i := range writes {
		write(t, s, event(name(i), 1, t0.Add(time.Duration(i)*time.Second)))
		got, err := ReadEvents(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > max {
			t.Fatalf("after %d writes the log lists %d Events, over MaxEvents %d", i+1, len(got), max)
		}
		if n := len(s.Events()); n > max {
			t.Fatalf("after %d writes %d Events are live, over MaxEvents %d", i+1, n, max)
		}
	}
	if limit := writes / (max / 10); s.compactions > limit {
		t.Errorf("%d compactions for %d new Events, want at most %d", s.compactions, writes, limit)
	}
	got, _ := ReadEvents(dir)
	if newest := got[len(got)-1].Name; newest != name(writes-1) {
		t.Errorf("newest Event listed is %s, want %s", newest, name(writes-1))
	}
}

func TestTTLDropsOldEvents(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	opts := Options{TTL: time.Hour}
	s := open(t, dir, opts, clk)
	write(t, s, event(name(0), 1, t0))
	write(t, s, event(name(1), 1, t0.Add(50*time.Minute)))
	clk.SetTime(t0.Add(70 * time.Minute))
	want := map[string]int32{name(1): 1}
	equalCounts(t, "Events past the TTL of one", s.Events(), want)
	closeStore(t, s)

	s = open(t, dir, opts, clk)
	equalCounts(t, "after reopen", s.Events(), want)
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "on disk after reopen", got, want)

	// Exactly TTL old is kept; a nanosecond more is not.
	clk.SetTime(t0.Add(110 * time.Minute))
	equalCounts(t, "at exactly the TTL", s.Events(), want)
	clk.SetTime(t0.Add(110*time.Minute + time.Nanosecond))
	equalCounts(t, "past the TTL", s.Events(), map[string]int32{})
	// The next compaction removes it from the file.
	s.mu.Lock()
	err = s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadEvents(dir); len(got) != 0 {
		t.Errorf("compaction kept %d expired events", len(got))
	}
}
