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
	storedAndReadBack(t, s, dir, want)
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

// A batch of many chunks is written whole, with one flush, each record
// where the store says it is.
func TestWriteBatchInChunks(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{MaxEvents: 5000}, newClock())
	syncs := 0
	s.sync = func(f *os.File) error { syncs++; return fdatasync(f) }
	want := map[string]int32{}
	var evs []*v1.Event
	for i := range 2000 {
		evs = append(evs, event(name(i), int32(i+1), t0.Add(time.Duration(i)*time.Millisecond)))
		want[name(i)] = int32(i + 1)
	}
	w := batch(evs...)
	before := s.size
	if err := s.WriteBatch(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	records := s.size - before
	if records < 4*writeChunk {
		t.Fatalf("the batch is %d bytes of records, want several chunks of %d", records, writeChunk)
	}
	if syncs != 1 {
		t.Errorf("a batch of %d chunks took %d flushes, want 1", records/writeChunk, syncs)
	}
	storedAndReadBack(t, s, dir, want)
}

// An Event that cannot be encoded after chunks of its batch were written
// fails the batch whole: the file is cut back to where it was, and no
// Event of the batch is stored, then or after a reopen.
func TestWriteBatchEncodeFailureAfterAChunk(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	write(t, s, event(name(0), 1, t0))
	size := s.size
	var evs []*v1.Event
	for i := 1; i < 300; i++ {
		evs = append(evs, event(name(i), 1, t0))
	}
	huge := event(name(300), 1, t0)
	huge.Message = strings.Repeat("x", maxRecordBytes)
	evs = append(evs, huge)
	if err := s.WriteBatch(context.Background(), batch(evs...)); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("WriteBatch with an Event over the record limit = %v", err)
	}
	if fi, err := os.Stat(s.path); err != nil || fi.Size() != size || s.size != size {
		t.Fatalf("after the failed batch the log is %v bytes (store says %d), want %d; %v", fi.Size(), s.size, size, err)
	}
	equalCounts(t, "after the failed batch", s.Events(), map[string]int32{name(0): 1})
	write(t, s, event(name(1), 5, t0))
	closeStore(t, s)
	s2 := open(t, dir, Options{}, newClock())
	equalCounts(t, "reopened", s2.Events(), map[string]int32{name(0): 1, name(1): 5})
}

// storedAndReadBack checks s holds want, then closes it and reads the
// same back from dir.
func storedAndReadBack(t *testing.T, s *Store, dir string, want map[string]int32) {
	t.Helper()
	equalCounts(t, "after the batch", s.Events(), want)
	closeStore(t, s)
	got, err := ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "read back", got, want)
}
