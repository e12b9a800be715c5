package store

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/events"
	v1 "k8s.io/api/core/v1"
)

var _ events.BatchSink = (*Store)(nil)

func batch(evs ...*v1.Event) []events.Write {
	w := make([]events.Write, len(evs))
	for i, ev := range evs {
		w[i] = events.Write{Event: ev, Update: ev.Count > 1}
	}
	return w
}

func TestWriteBatchOneFlush(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	syncs := 0
	s.sync = func(f *os.File) error { syncs++; return fdatasync(f) }
	want := map[string]int32{}
	var evs []*v1.Event
	for i := range 100 {
		evs = append(evs, event(name(i), int32(i+1), t0.Add(time.Duration(i)*time.Second)))
		want[name(i)] = int32(i + 1)
	}
	if err := s.WriteBatch(context.Background(), batch(evs...)); err != nil {
		t.Fatal(err)
	}
	if syncs != 1 {
		t.Errorf("a batch of 100 took %d flushes, want 1", syncs)
	}
	evs[0].Count = 99 // the caller's Events are not shared
	equalCounts(t, "after the batch", s.Events(), want)
	closeStore(t, s)
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "read back", got, want)
}

func TestWriteBatchFailsWhole(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	write(t, s, event(name(0), 1, t0))
	s.sync = func(*os.File) error {
		s.sync = fdatasync
		return errors.New("EIO from a dying disk")
	}
	err := s.WriteBatch(context.Background(), batch(event(name(0), 2, t0), event(name(1), 1, t0), event(name(2), 1, t0)))
	if err == nil || !strings.Contains(err.Error(), "EIO") || !strings.Contains(err.Error(), "3 events") {
		t.Fatalf("WriteBatch with a failing fsync = %v, want the error naming 3 events", err)
	}
	equalCounts(t, "after the failed batch", s.Events(), map[string]int32{name(0): 1})
	closeStore(t, s)
	s2 := open(t, dir, Options{}, newClock())
	equalCounts(t, "reopened", s2.Events(), map[string]int32{name(0): 1})
}

func TestWriteBatchRejectsNamelessEventBeforeWriting(t *testing.T) {
	s := open(t, t.TempDir(), Options{}, newClock())
	err := s.WriteBatch(context.Background(), batch(event(name(0), 1, t0), event("", 1, t0)))
	if err == nil {
		t.Fatal("WriteBatch with a nameless Event succeeded")
	}
	if n := len(s.Events()); n != 0 {
		t.Errorf("%d Events stored from a rejected batch, want 0", n)
	}
}

func TestWriteBatchPastMaxEventsEvictsTheOldest(t *testing.T) {
	s := open(t, t.TempDir(), Options{MaxEvents: 10}, newClock())
	var evs []*v1.Event
	for i := range 25 {
		evs = append(evs, event(name(i), 1, t0.Add(time.Duration(i)*time.Second)))
	}
	if err := s.WriteBatch(context.Background(), batch(evs...)); err != nil {
		t.Fatal(err)
	}
	// Past the bound a tenth of it is freed: 9 are left.
	want := map[string]int32{}
	for i := 16; i < 25; i++ {
		want[name(i)] = 1
	}
	equalCounts(t, "after a batch of 25 into 10", s.Events(), want)
}
