package store

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestReopenKeepsLatestCountPerName(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	s := open(t, dir, Options{}, clk)
	want := map[string]int32{}
	for round := int32(1); round <= 5; round++ {
		for i := range 3 {
			c := round + int32(i) // a different count per Event
			write(t, s, event(name(i), c, t0.Add(time.Duration(round)*time.Minute)))
			want[name(i)] = c
		}
	}
	equalCounts(t, "before close", s.Events(), want)
	closeStore(t, s)

	s = open(t, dir, Options{}, clk)
	evs := s.Events()
	equalCounts(t, "after reopen", evs, want)
	if got := evs[0].LastTimestamp.Time; !got.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("lastTimestamp after reopen = %v, want %v", got, t0.Add(5*time.Minute))
	}
	// Counts continue from the reloaded value.
	write(t, s, event(name(0), 6, t0.Add(6*time.Minute)))
	want[name(0)] = 6
	closeStore(t, s)
	s = open(t, dir, Options{}, clk)
	equalCounts(t, "after second reopen", s.Events(), want)

	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "ReadEvents", got, want)
}

func TestEventsIsACopy(t *testing.T) {
	s := open(t, t.TempDir(), Options{}, newClock())
	ev := event(name(0), 1, t0)
	write(t, s, ev)
	ev.Count = 99 // the caller reusing its Event must not reach the store
	evs := s.Events()
	evs[0].Count = 42
	if got := s.Events()[0].Count; got != 1 {
		t.Fatalf("count = %d, want 1: the store shares memory with a caller", got)
	}
}

func TestTornTailLosesOnlyThatRecord(t *testing.T) {
	build := func(t *testing.T) (dir string, lastStart, end int64) {
		dir = t.TempDir()
		s := open(t, dir, Options{}, newClock())
		for i := range 3 {
			write(t, s, event(name(i), 1, t0))
		}
		write(t, s, event(name(1), 2, t0.Add(time.Minute)))
		lastStart = fileSize(t, logPath(dir))
		write(t, s, event(name(1), 3, t0.Add(2*time.Minute)))
		closeStore(t, s)
		return dir, lastStart, fileSize(t, logPath(dir))
	}
	// Without the last append, name(1) is back at count 2; nothing else moves.
	want := map[string]int32{name(0): 1, name(1): 2, name(2): 1}

	cases := map[string]func(t *testing.T, path string, lastStart, end int64){
		"cut after one byte": func(t *testing.T, path string, lastStart, _ int64) {
			truncate(t, path, lastStart+1)
		},
		"cut in the middle": func(t *testing.T, path string, lastStart, end int64) {
			truncate(t, path, (lastStart+end)/2)
		},
		"newline missing": func(t *testing.T, path string, _, end int64) {
			truncate(t, path, end-1)
		},
		"blocks never written": func(t *testing.T, path string, lastStart, end int64) {
			// Size grew but the data never reached the disk: zeros.
			zero(t, path, lastStart, end-lastStart)
		},
		"newline written, start lost": func(t *testing.T, path string, lastStart, end int64) {
			zero(t, path, lastStart, (end-lastStart)/2)
		},
	}
	for tc, damage := range cases {
		t.Run(tc, func(t *testing.T) {
			dir, lastStart, end := build(t)
			damage(t, logPath(dir), lastStart, end)
			s, err := Open(dir, Options{}, newClock(), nil)
			if err != nil {
				t.Fatalf("Open after a torn append: %v", err)
			}
			defer s.Close()
			equalCounts(t, "after torn append", s.Events(), want)
			if got := fileSize(t, logPath(dir)); got != lastStart {
				t.Errorf("log is %d bytes, want the torn tail cut at %d", got, lastStart)
			}
			// Appends go after the good data, so the next Open finds no damage.
			write(t, s, event(name(2), 2, t0.Add(3*time.Minute)))
			closeStore(t, s)
			s, err = Open(dir, Options{}, newClock(), nil)
			if err != nil {
				t.Fatalf("Open after writing past a torn tail: %v", err)
			}
			defer s.Close()
			want2 := map[string]int32{name(0): 1, name(1): 2, name(2): 2}
			equalCounts(t, "after append past torn tail", s.Events(), want2)
		})
	}
}

func TestCorruptMiddleIsSetAside(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	s := open(t, dir, Options{}, clk)
	for i := range 4 {
		write(t, s, event(name(i), 1, t0))
	}
	mid := fileSize(t, logPath(dir))
	write(t, s, event(name(0), 2, t0.Add(time.Minute))) // to be damaged
	afterMid := fileSize(t, logPath(dir))
	write(t, s, event(name(1), 2, t0.Add(2*time.Minute)))
	closeStore(t, s)
	original, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), original...)
	damaged[(mid+afterMid)/2] ^= 0x20 // one flipped bit inside the JSON
	if err := os.WriteFile(logPath(dir), damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, Options{}, clk, nil)
	if s == nil {
		t.Fatalf("Open returned no store: %v", err)
	}
	defer s.Close()
	var cerr *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &cerr) {
		t.Fatalf("Open error = %v, want a CorruptError", err)
	}
	aside := logPath(dir) + ".corrupt-" + strconv.FormatInt(t0.Unix(), 10)
	if cerr.SetAside != aside || cerr.Offset != mid || cerr.Reason != "checksum mismatch" || cerr.Kept != 4 {
		t.Errorf("CorruptError = %+v, want set aside as %s, offset %d, checksum mismatch, 4 kept", cerr, aside, mid)
	}
	for _, part := range []string{logPath(dir), "corrupt", "set aside as " + aside, "events kept: 4"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if got, _ := os.ReadFile(aside); string(got) != string(damaged) {
		t.Errorf("set-aside file does not hold the damaged log")
	}
	// The fresh log holds what verified, including records after the damage.
	want := map[string]int32{name(0): 1, name(1): 2, name(2): 1, name(3): 1}
	equalCounts(t, "fresh store", s.Events(), want)
	write(t, s, event(name(3), 2, t0.Add(3*time.Minute)))
	closeStore(t, s)
	want[name(3)] = 2
	s, err = Open(dir, Options{}, clk, nil)
	if err != nil {
		t.Fatalf("reopening the fresh log: %v", err)
	}
	defer s.Close()
	equalCounts(t, "fresh log reopened", s.Events(), want)
}

func TestGarbageLogIsSetAside(t *testing.T) {
	for tc, content := range map[string]string{
		"text":            "hello\nworld\nthis is not a log\n",
		"one huge line":   strings.Repeat("x", maxRecordBytes+10) + "\n" + "tail\n",
		"bad then record": "junk\n" + string(mustRecord(t, event(name(0), 1, t0))),
	} {
		t.Run(tc, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(logPath(dir), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir, Options{}, newClock(), nil)
			if s == nil || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, %v; want a store and ErrCorrupt", s, err)
			}
			defer s.Close()
			if _, err := os.Stat(logPath(dir) + ".corrupt-" + strconv.FormatInt(t0.Unix(), 10)); err != nil {
				t.Errorf("garbage not set aside: %v", err)
			}
			write(t, s, event(name(1), 1, t0))
		})
	}
}

func mustRecord(t testing.TB, ev *v1.Event) []byte {
	t.Helper()
	line, err := encodeRecord(ev)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func TestFailedWriteLeavesNoDamage(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	write(t, s, event(name(0), 1, t0))
	s.sync = func(f *os.File) error {
		s.sync = fdatasync
		return errors.New("EIO from a dying disk")
	}
	err := s.Write(context.Background(), event(name(0), 2, t0.Add(time.Minute)), true)
	if err == nil || !strings.Contains(err.Error(), "EIO") {
		t.Fatalf("Write with a failing fsync = %v, want the error", err)
	}
	equalCounts(t, "after failed write", s.Events(), map[string]int32{name(0): 1})
	// The next write rewrites the live set to a new file first.
	before := s.compactions
	write(t, s, event(name(1), 1, t0))
	if s.compactions != before+1 {
		t.Errorf("no rewrite after a failed write")
	}
	closeStore(t, s)
	s2, err := Open(dir, Options{}, newClock(), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s2.Close()
	equalCounts(t, "reopened", s2.Events(), map[string]int32{name(0): 1, name(1): 1})
}

func TestClose(t *testing.T) {
	s := open(t, t.TempDir(), Options{}, newClock())
	write(t, s, event(name(0), 1, t0))
	closeStore(t, s)
	closeStore(t, s)
	if err := s.Write(context.Background(), event(name(0), 2, t0), true); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if n := len(s.Events()); n != 1 {
		t.Errorf("Events after Close: %d, want the last live set", n)
	}
}

func TestWriteRejectsNamelessEvent(t *testing.T) {
	s := open(t, t.TempDir(), Options{}, newClock())
	if err := s.Write(context.Background(), event("", 1, t0), false); err == nil {
		t.Error("Write of an Event without a name succeeded")
	}
	if err := s.Write(context.Background(), nil, false); err == nil {
		t.Error("Write of nil succeeded")
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	for _, o := range []Options{{MaxEvents: -1}, {TTL: -time.Second}, {MaxLogBytes: 1000}, {MaxLogBytes: -1}} {
		err := o.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "store: ") {
			t.Errorf("%+v: Validate = %v, want an error", o, err)
		}
		if _, oerr := Open(t.TempDir(), o, nil, nil); oerr == nil {
			t.Errorf("%+v: Open accepted invalid options", o)
		}
	}
	d := (Options{}).withDefaults()
	if d.MaxEvents != DefaultMaxEvents || d.TTL != DefaultTTL || d.MaxLogBytes != DefaultMaxLogBytes {
		t.Errorf("defaults = %+v", d)
	}
}

func truncate(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func zero(t testing.TB, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, n), off); err != nil {
		t.Fatal(err)
	}
}
