//go:build linux

package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// pollUntil waits, with a deadline, for cond to hold.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitLimit)
		}
		time.Sleep(time.Millisecond) // polling a condition, not waiting for time
	}
}

func TestWatchStartBackoffSequence(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := newTestSource(t, t.TempDir(), clk)
	var attempts atomic.Int64
	s.newWatcher = func(string) (watcher, error) {
		attempts.Add(1)
		return nil, errors.New("unable to create inotify: too many open files")
	}
	h := start(t, s)
	snap := h.next()
	if !snap.Relist || snap.Watch.Up || snap.Watch.Err == nil {
		t.Fatalf("initial: %s; want a list with the watch down", describe(snap))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 20}
	for i, w := range want {
		w *= time.Second
		if snap.Watch.Backoff != w || !snap.Watch.RetryAt.Equal(clk.Now().Add(w)) {
			t.Fatalf("failure %d: backoff %v retry at %v, want %v at %v", i+1,
				snap.Watch.Backoff, snap.Watch.RetryAt, w, clk.Now().Add(w))
		}
		if i == len(want)-1 {
			break
		}
		clk.Step(w - time.Millisecond)
		if got := attempts.Load(); got != int64(i+1) {
			t.Fatalf("retried before the backoff ran out: %d attempts", got)
		}
		clk.Step(time.Millisecond)
		snap = h.next()
		if snap.Relist {
			t.Fatalf("a failed attempt relisted: %s", describe(snap))
		}
	}
	// At the cap the status no longer changes, so no snapshot: count attempts.
	clk.Step(20 * time.Second)
	pollUntil(t, "a retry at the 20s cap", func() bool { return attempts.Load() == int64(len(want)+1) })
	pollUntil(t, "the next retry armed", func() bool { return clk.Waiters() == 2 }) // ticker + retry
	if got := s.backoff.Get(watchID); got != 20*time.Second {
		t.Fatalf("backoff after the cap = %v, want 20s", got)
	}
}

func TestMissingPathRetriedEverySecondWithoutBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	dir := filepath.Join(t.TempDir(), "manifests")
	s := newTestSource(t, dir, clk)
	var attempts atomic.Int64
	s.newWatcher = func(p string) (watcher, error) {
		attempts.Add(1)
		return newPlatformWatcher(p)
	}
	h := start(t, s)
	snap := h.next()
	if !errors.Is(snap.PathErr, fs.ErrNotExist) || snap.Watch.Up || snap.Watch.Backoff != 0 ||
		!snap.Watch.RetryAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("missing path: %s", describe(snap))
	}
	for i := range 3 { // still missing: retried each second, quietly
		clk.Step(time.Second)
		pollUntil(t, "a retry", func() bool { return attempts.Load() == int64(i+2) })
		pollUntil(t, "the next retry armed", func() bool { return clk.Waiters() == 2 }) // ticker + retry
	}
	select {
	case snap := <-h.out:
		t.Fatalf("a quiet retry of a missing path sent %s", describe(snap))
	default:
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	snap = h.next()
	if !snap.Relist || !snap.Watch.Up || snap.Watch.Err != nil || snap.PathErr != nil || s.backoff.Get(watchID) != 0 {
		t.Fatalf("after mkdir: %s", describe(snap))
	}
}

func TestWatchFailureOverflowAndScriptedEvents(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	dir := t.TempDir()
	s := newTestSource(t, dir, clk)
	watchers := make(chan *fakeWatcher, 2)
	var made []*fakeWatcher
	s.newWatcher = func(string) (watcher, error) {
		w := newFakeWatcher()
		watchers <- w
		return w, nil
	}
	h := start(t, s)
	h.next()
	w := <-watchers
	made = append(made, w)

	// A file the watch reports as moved into place.
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img"))
	clk.Step(time.Second)
	w.push(t, watchBatch{events: []rawEvent{{on: onPath, name: "a.yaml", op: opMovedTo}}})
	snap := h.next()
	if f, _ := fileIn(snap, "a.yaml"); snap.Relist || !f.Complete || !f.ChangedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("after MOVED_TO: %s", describe(snap))
	}

	// Lost events: relist and keep the watch.
	w.push(t, watchBatch{events: []rawEvent{{op: opOverflow}}})
	if snap := h.next(); !snap.Relist || !snap.Watch.Up || w.closed.Load() {
		t.Fatalf("after overflow: %s", describe(snap))
	}

	// A failed watch: down with a 1s backoff, then up again with a relist.
	w.push(t, watchBatch{err: errors.New("read: input/output error")})
	snap = h.next()
	if snap.Watch.Up || snap.Watch.Err == nil || snap.Watch.Backoff != time.Second || !w.closed.Load() {
		t.Fatalf("after failure: %s", describe(snap))
	}
	clk.Step(time.Second)
	snap = h.next()
	if !snap.Relist || !snap.Watch.Up || snap.Watch.Err != nil {
		t.Fatalf("after retry: %s", describe(snap))
	}
	made = append(made, <-watchers)
	if len(made) != 2 || made[1].closed.Load() {
		t.Fatalf("watchers: %d made, second closed %v", len(made), made[1].closed.Load())
	}
}
