//go:build linux

package file

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// heldWatcher is the real inotify watcher with its batches held back until
// the test lets them through, all at once: a source busy elsewhere (its
// snapshot not yet taken) while the reader went on reading the kernel's
// queue, so that it takes several reads' batches in as one group. Each
// read is the kernel's own: events it did not merge.
type heldWatcher struct {
	watcher
	read chan watchBatch // each batch the real watcher read, for the test
	out  chan watchBatch // what the source takes, filled by release
	held []watchBatch
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func holdWatcher(inner watcher) *heldWatcher {
	h := &heldWatcher{watcher: inner, read: make(chan watchBatch, 64), out: make(chan watchBatch, 64),
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			select {
			case b := <-inner.Events():
				select {
				case h.read <- b:
				case <-h.stop:
					return
				}
			case <-h.stop:
				return
			}
		}
	}()
	return h
}

func (h *heldWatcher) Events() <-chan watchBatch { return h.out }

func (h *heldWatcher) Close() {
	h.once.Do(func() {
		close(h.stop)
		h.watcher.Close()
		<-h.done
	})
}

// await holds the batches the real watcher reads until their events
// satisfy ok.
func (h *heldWatcher) await(t *testing.T, what string, ok func([]rawEvent) bool) {
	t.Helper()
	deadline := time.After(waitLimit)
	for !ok(h.events()) {
		select {
		case b := <-h.read:
			if b.err != nil {
				t.Fatalf("watch failed: %v", b.err)
			}
			h.held = append(h.held, b)
		case <-deadline:
			t.Fatalf("no %s within %v; held %+v", what, waitLimit, h.events())
		}
	}
}

// events are the events of the held batches, in order.
func (h *heldWatcher) events() []rawEvent {
	var evs []rawEvent
	for _, b := range h.held {
		evs = append(evs, b.events...)
	}
	return evs
}

// release lets the held batches through together, as one: the source
// takes the batches queued when it gets to them as one group, and one
// pushed after another could reach it before the next is queued.
func (h *heldWatcher) release() {
	h.out <- watchBatch{events: h.events()}
	h.held = nil
}

// count is how many of evs are on name with any of the bits of o.
func count(evs []rawEvent, name string, o op) int {
	n := 0
	for _, ev := range evs {
		if ev.name == name && ev.op&o != 0 {
			n++
		}
	}
	return n
}

// heldSource starts a source on dir whose watch is held (see heldWatcher),
// and takes its first snapshot.
func heldSource(t *testing.T, dir string) (*harness, *heldWatcher) {
	t.Helper()
	s := newTestSource(t, dir, nil)
	started := make(chan *heldWatcher, 1)
	s.newWatcher = func(p string) (watcher, error) {
		w, err := newPlatformWatcher(p)
		if err != nil {
			return nil, err
		}
		hw := holdWatcher(w)
		started <- hw
		return hw, nil
	}
	h := start(t, s)
	h.next()
	return h, <-started
}

// eventsOn waits for the snapshot whose events name name, and returns them.
func eventsOn(h *harness, name string) []types.WatchEvent {
	h.t.Helper()
	s := h.waitFor("an event on "+name, func(s types.Snapshot) bool {
		return slices.ContainsFunc(s.Events, func(e types.WatchEvent) bool { return e.Name == name })
	})
	return s.Events
}

// A file written in place in two chunks, each write read by the watch on
// its own, and taken in by the source in one group: one event, which says
// that it holds the versions of every write but the first (the empty file
// of the truncating open among them): the kubelet, taking the kernel's
// events in one by one, may have read and run the half.
func TestFoldedWritesInPlaceCountTheirVersions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "web.yaml")
	writeFile(t, p, podYAML("web", "img:1"))
	h, w := heldSource(t, dir)

	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Each write waits until the watch has read the one before, so that
	// the kernel cannot merge their events into one.
	w.await(t, "truncation", func(evs []rawEvent) bool { return count(evs, "web.yaml", opWrite) == 1 })
	whole := podYAML("web", "img:22")
	half := len(whole) - len("2\"\n")
	for i, c := range []string{whole[:half], whole[half:]} {
		if _, err := f.WriteString(c); err != nil {
			t.Fatal(err)
		}
		w.await(t, "a write", func(evs []rawEvent) bool { return count(evs, "web.yaml", opWrite) == i+2 })
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w.await(t, "the close", func(evs []rawEvent) bool { return count(evs, "web.yaml", opCloseWrite) == 1 })
	w.release()

	want := []types.WatchEvent{{Name: "web.yaml", Folded: 2}}
	if got := eventsOn(h, "web.yaml"); !slices.Equal(got, want) {
		t.Errorf("events %+v, want %+v", got, want)
	}
}

// A file written in place, then replaced by a rename onto it, taken in
// together: one event of two versions. A new file created and written is
// one version: its create left it empty.
func TestFoldedWriteThenMoveInCountsBoth(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "web.yaml")
	writeFile(t, p, podYAML("web", "img:1"))
	h, w := heldSource(t, dir)

	writeFile(t, filepath.Join(dir, "new.yaml"), podYAML("new", "img:1"))
	w.await(t, "the new file's write", func(evs []rawEvent) bool {
		return count(evs, "new.yaml", opCreate) == 1 && count(evs, "new.yaml", opCloseWrite) == 1
	})
	writeFile(t, p, podYAML("web", "img:2"))
	w.await(t, "the write", func(evs []rawEvent) bool { return count(evs, "web.yaml", opCloseWrite) == 1 })
	moveIn(t, dir, "web.yaml", podYAML("web", "img:3"))
	w.await(t, "the move in", func(evs []rawEvent) bool { return count(evs, "web.yaml", opMovedTo) == 1 })
	// The truncating open and the write may be one event of the kernel's
	// or two.
	evs := w.events()
	created, writes := count(evs, "new.yaml", opWrite), count(evs, "web.yaml", opWrite)
	w.release()

	want := []types.WatchEvent{{Name: "new.yaml", Folded: created - 1}, {Name: "web.yaml", Folded: writes}}
	if got := eventsOn(h, "web.yaml"); !slices.Equal(got, want) {
		t.Errorf("events %+v, want %+v", got, want)
	}
}
