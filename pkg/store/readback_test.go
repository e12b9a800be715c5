package store

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The store keeps only where each Event's record is; compaction copies
// the records from the old log. Events written once, before many
// compactions driven by others, must come through each of them whole.
func TestCompactionKeepsEventsHeldOnlyInTheLog(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	s, err := Open(dir, Options{MaxLogBytes: MinLogBytes}, newClock(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.sync = noSync

	const cold, hot = 30, 5
	want := map[string]*v1.Event{}
	for i := range cold {
		ev := event(name(i), int32(i+1), t0.Add(time.Duration(i)*time.Second))
		ev.Message = fmt.Sprintf("cold event %d: %s", i, strings.Repeat("x", i*7))
		write(t, s, ev)
		want[ev.Name] = ev.DeepCopy()
		// The caller may reuse its Event: the store must not depend on it.
		ev.Message, ev.Count = "overwritten by the caller", -1
	}
	for u := 0; s.compactions < 4; u++ {
		if u > 100_000 {
			t.Fatalf("%d writes and only %d compactions", u, s.compactions)
		}
		ev := event(name(cold+u%hot), int32(u/hot+1), t0.Add(time.Hour+time.Duration(u)*time.Second))
		write(t, s, ev)
		want[ev.Name] = ev
	}

	check := func(what string, got []v1.Event) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d events, want %d", what, len(got), len(want))
		}
		for _, ev := range got {
			w, ok := want[ev.Name]
			switch {
			case !ok:
				t.Errorf("%s: unexpected event %s", what, ev.Name)
			case ev.Count != w.Count || ev.Message != w.Message || !ev.LastTimestamp.Equal(&w.LastTimestamp):
				t.Errorf("%s: %s is count %d, last %v, message %q; want %d, %v, %q",
					what, ev.Name, ev.Count, ev.LastTimestamp, ev.Message, w.Count, w.LastTimestamp, w.Message)
			}
		}
	}
	check(fmt.Sprintf("after %d compactions", s.compactions), s.Events())
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	check("ReadEvents", got)
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings while compacting a sound log:\n%s", logs.String())
	}
	closeStore(t, s)
	s = open(t, dir, Options{MaxLogBytes: MinLogBytes}, newClock())
	check("after reopen", s.Events())
}

// A record whose bytes change on disk after it was written no longer
// verifies: compaction leaves that Event out, says so, and keeps the rest,
// rather than failing and leaving the log uncompacted for good.
func TestCompactionLeavesOutARecordDamagedOnDisk(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	s, err := Open(dir, Options{}, newClock(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for i := range 3 {
		write(t, s, event(name(i), 1, t0.Add(time.Duration(i)*time.Minute)))
	}
	s.mu.Lock()
	damaged := s.live["kube-system/"+name(1)]
	s.mu.Unlock()
	f, err := os.OpenFile(logPath(dir), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), damaged.off+damaged.size-10); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	equalCounts(t, "read back with one record damaged", s.Events(), map[string]int32{name(0): 1, name(2): 1})
	s.mu.Lock()
	err = s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatalf("compact: %v", err)
	}
	if !strings.Contains(logs.String(), "no longer verify") {
		t.Errorf("no warning about the damaged record:\n%s", logs.String())
	}
	equalCounts(t, "after compaction", s.Events(), map[string]int32{name(0): 1, name(2): 1})
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "on disk after compaction", got, map[string]int32{name(0): 1, name(2): 1})
}
