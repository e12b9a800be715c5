package relist

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// filesDir is a folder of the given empty files.
func filesDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		writeFile(t, filepath.Join(dir, n), "")
	}
	return dir
}

func openFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
}

// nextBatch is the watch's next batch, or fails the test.
func nextBatch(t *testing.T, w watcher) batch {
	t.Helper()
	select {
	case b := <-w.Events():
		if b.err != nil {
			t.Fatal(b.err)
		}
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no batch from the watch")
		return batch{}
	}
}

func openedIn(b batch, name string) bool {
	return slices.ContainsFunc(b.events, func(e event) bool { return e.op == opened && e.name == name })
}

// Opens left queued while the detector is busy are read late: the batch
// says the queue was last found empty before they came, not when it was
// read. Once read, the queue found empty again says so (quiet 1ms: at
// once).
func TestWatchSaysWhenTheQueueWasEmpty(t *testing.T) {
	dir := filesDir(t, "a", "b", "c")
	clk := testingclock.NewFakeClock(base)
	w, err := newPlatformWatch(dir, clk, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Nobody takes the batches yet: b waits in the queue, or in the
	// batch with a, which waits to be taken.
	openFile(t, filepath.Join(dir, "a"))
	clk.Step(time.Second)
	t1 := clk.Now()
	openFile(t, filepath.Join(dir, "b"))
	clk.Step(time.Second)
	t2 := clk.Now()
	for seenB := false; !seenB; {
		b := nextBatch(t, w)
		switch {
		case openedIn(b, "a") && b.since.After(base):
			t.Fatalf("a opened at %v, in a batch read from a queue found empty at %v", base, b.since)
		case openedIn(b, "b") && b.since.After(t1):
			t.Fatalf("b opened at %v, in a batch read at %v from a queue found empty at %v", t1, b.at, b.since)
		}
		seenB = openedIn(b, "b")
	}
	// Everything read: the queue is found empty again, after t2, and said
	// so at once.
	if q := nextBatch(t, w); len(q.events) != 0 || q.since.Before(t2) {
		t.Fatalf("after the batches: %+v, want the queue found empty at %v", q, t2)
	}
	clk.Step(time.Second)
	t3 := clk.Now()
	openFile(t, filepath.Join(dir, "c"))
	b := nextBatch(t, w)
	if !openedIn(b, "c") || b.since.Before(t2) || b.since.After(t3) {
		t.Fatalf("c opened at %v: batch %+v, want one read from a queue found empty at %v or after", t3, b, t2)
	}
}

// Nothing comes for quiet after a batch: the watch says when it found the
// queue empty, so that a pause is known for one, however late the next
// open is read.
func TestWatchSaysWhenNothingCameForQuiet(t *testing.T) {
	dir := filesDir(t, "a")
	const quiet = 20 * time.Millisecond
	w, err := newPlatformWatch(dir, clock.RealClock{}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	openFile(t, filepath.Join(dir, "a"))
	b := nextBatch(t, w)
	if !openedIn(b, "a") {
		t.Fatalf("first batch %+v, want a opened", b)
	}
	q := nextBatch(t, w)
	if len(q.events) != 0 || q.since.IsZero() || q.since.Sub(b.at) < quiet {
		t.Fatalf("after a batch read at %v: %+v, want no events and the queue found empty %v or more after", b.at, q, quiet)
	}
}
