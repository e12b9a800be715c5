package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestReadEventsDuringWritesAndCompactions runs readers against a writer
// that appends and compacts. The writer updates events in a fixed round
// robin, so every prefix of its history has one shape: for some round r,
// events 0..j-1 are at count r+1 and the rest at r. A reader must always
// see such a prefix, never a mix or a gap, and never go backwards.
func TestReadEventsDuringWritesAndCompactions(t *testing.T) {
	const events, rounds, readers = 50, 200, 3
	dir := t.TempDir()
	s := open(t, dir, Options{MaxLogBytes: MinLogBytes}, newClock())
	s.sync = noSync // the page cache is what concurrent readers see either way
	for i := range events {
		write(t, s, event(name(i), 1, t0))
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, readers+1)
	reads := make([]int, readers)
	for r := range readers {
		wg.Go(func() {
			var last int64
			for {
				evs, err := ReadEvents(dir)
				if err != nil {
					errs <- err
					return
				}
				reads[r]++
				total, err := prefixLength(evs, events)
				if err != nil {
					errs <- err
					return
				}
				if total < last {
					errs <- fmt.Errorf("read went back from %d writes to %d", last, total)
					return
				}
				last = total
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	wg.Go(func() {
		defer close(done)
		for round := int32(2); round <= rounds; round++ {
			for i := range events {
				if err := s.Write(t.Context(), event(name(i), round, t0.Add(time.Duration(round)*time.Second)), true); err != nil {
					errs <- err
					return
				}
			}
		}
	})

	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("readers or writer did not finish within 2 minutes")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d compactions; reads per reader: %v", s.compactions, reads)
	if s.compactions < 10 {
		t.Errorf("only %d compactions: the test did not exercise them", s.compactions)
	}
}

// prefixLength checks that evs is a prefix of the round-robin history and
// returns how many writes it holds.
func prefixLength(evs []v1.Event, n int) (int64, error) {
	c := counts(evs)
	if len(evs) != n || len(c) != n {
		return 0, fmt.Errorf("read %d events (%d names), want %d", len(evs), len(c), n)
	}
	low := c[name(n-1)]
	var total int64
	ahead := true // still among the events already at low+1
	for i := range n {
		got := c[name(i)]
		total += int64(got)
		switch {
		case ahead && got == low+1:
		case got == low:
			ahead = false
		default:
			return 0, fmt.Errorf("not a prefix of the history: %s at count %d, last event at %d", name(i), got, low)
		}
	}
	return total, nil
}

func TestReadEventsWithoutLog(t *testing.T) {
	_, err := ReadEvents(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadEvents of an empty dir = %v, want fs.ErrNotExist", err)
	}
}

func TestReadEventsSkipsDamage(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	write(t, s, event(name(0), 1, t0))
	write(t, s, event(name(1), 1, t0))
	closeStore(t, s)
	f, err := os.OpenFile(logPath(dir), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := mustRecord(t, event(name(2), 1, t0))
	// garbage in the middle, a good record, then half a record being written
	_, _ = f.Write([]byte("\x00\x00garbage\n"))
	_, _ = f.Write(line)
	_, _ = f.Write(line[:len(line)/2])
	_ = f.Close()
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "ReadEvents", got, map[string]int32{name(0): 1, name(1): 1, name(2): 1})
}
