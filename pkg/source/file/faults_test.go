//go:build linux

package file

// Lost inotify events (issue 6): the kernel's IN_Q_OVERFLOW, for real and
// through the watcher seam, must be followed by a relist that finds what the
// lost events would have said.

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	"golang.org/x/sys/unix"
	clocktesting "k8s.io/utils/clock/testing"
)

// inotifyRecord encodes one struct inotify_event, name NUL-padded to 16.
func inotifyRecord(wd int32, mask uint32, name string) []byte {
	n := 0
	if name != "" {
		n = (len(name)/16 + 1) * 16
	}
	b := make([]byte, unix.SizeofInotifyEvent+n)
	binary.NativeEndian.PutUint32(b[0:], uint32(wd))
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(n))
	copy(b[unix.SizeofInotifyEvent:], name)
	return b
}

func TestFaultInotifyOverflowRecordIsOverflow(t *testing.T) {
	w := &inotifyWatcher{wdPath: 1, wdParent: 2}
	buf := append(inotifyRecord(1, unix.IN_MOVED_TO, "a.yaml"), inotifyRecord(-1, unix.IN_Q_OVERFLOW, "")...)
	buf = append(buf, inotifyRecord(1, unix.IN_CLOSE_WRITE, "b.yaml")...)
	evs := w.parse(buf)
	if len(evs) != 3 || evs[0].name != "a.yaml" || evs[0].op != opMovedTo || evs[1].op != opOverflow || evs[2].name != "b.yaml" {
		t.Fatalf("parsed %+v", evs)
	}
	p := pending{names: map[string]written{}, dots: map[string]bool{}}
	p.addBatch(watchBatch{events: evs}, false, "manifests")
	if !p.relist || p.restart || p.err != nil || p.names["a.yaml"] != writtenClosed || p.names["b.yaml"] != writtenClosed {
		t.Fatalf("pending after an overflow among events = %+v", p)
	}
}

// TestFaultOverflowThroughSeamRelistsWhatWasLost: files changed with no
// event reported, then an overflow (alone, and inside a batch with other
// events): one relist snapshot that has every change, the watch kept.
func TestFaultOverflowThroughSeamRelistsWhatWasLost(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gone.yaml"), podYAML("gone", "img"))
	writeFile(t, filepath.Join(dir, "edit.yaml"), podYAML("edit", "img:1"))
	s := newTestSource(t, dir, clk)
	watchers := make(chan *fakeWatcher, 2)
	s.newWatcher = func(string) (watcher, error) {
		w := newFakeWatcher()
		watchers <- w
		return w, nil
	}
	h := start(t, s)
	if snap := h.next(); !snap.Relist || len(snap.Files) != 2 {
		t.Fatalf("initial: %s", describe(snap))
	}
	w := <-watchers

	// Changes whose events the kernel dropped.
	writeFile(t, filepath.Join(dir, "new.yaml"), podYAML("new", "img"))
	if err := os.Remove(filepath.Join(dir, "gone.yaml")); err != nil {
		t.Fatal(err)
	}
	moveIn(t, dir, "edit.yaml", podYAML("edit", "img:2"))
	w.push(t, watchBatch{events: []rawEvent{{op: opOverflow}}})
	snap := h.next()
	if !snap.Relist || !snap.Watch.Up || w.closed.Load() {
		t.Fatalf("after overflow: %s", describe(snap))
	}
	if _, ok := fileIn(snap, "gone.yaml"); ok {
		t.Errorf("removed file still listed after the overflow relist: %s", describe(snap))
	}
	if f, ok := fileIn(snap, "new.yaml"); !ok || f.Pod == nil {
		t.Errorf("unannounced new file missing after the overflow relist: %s", describe(snap))
	}
	if f, _ := fileIn(snap, "edit.yaml"); image(f) != "img:2" {
		t.Errorf("unannounced edit missing after the overflow relist: %s", describe(snap))
	}

	// An overflow in the middle of a batch: the named file is refreshed and
	// the relist still happens.
	writeFile(t, filepath.Join(dir, "named.yaml"), podYAML("named", "img"))
	writeFile(t, filepath.Join(dir, "lost.yaml"), podYAML("lost", "img"))
	w.push(t, watchBatch{events: []rawEvent{{on: onPath, name: "named.yaml", op: opCreate | opCloseWrite}, {op: opOverflow}}})
	snap = h.next()
	if !snap.Relist || !snap.Watch.Up {
		t.Fatalf("after mixed overflow batch: %s", describe(snap))
	}
	for _, name := range []string{"named.yaml", "lost.yaml"} {
		if f, ok := fileIn(snap, name); !ok || f.Pod == nil {
			t.Errorf("%s missing: %s", name, describe(snap))
		}
	}
	select {
	case w2 := <-watchers:
		t.Fatalf("an overflow restarted the watch (new watcher %p); it should only relist", w2)
	default:
	}
}

// gatedWatcher holds back a real watcher's batches until open is closed, so
// the kernel queue fills while nobody reads it.
type gatedWatcher struct {
	w    watcher
	out  chan watchBatch
	open chan struct{}
	stop chan struct{}
	done chan struct{}
}

func (g *gatedWatcher) Events() <-chan watchBatch { return g.out }
func (g *gatedWatcher) Single() bool              { return g.w.Single() }
func (g *gatedWatcher) Close() {
	close(g.stop)
	<-g.done
	g.w.Close()
}

func (g *gatedWatcher) forward() {
	defer close(g.done)
	select {
	case <-g.open:
	case <-g.stop:
		return
	}
	for {
		select {
		case b, ok := <-g.w.Events():
			if !ok {
				return
			}
			select {
			case g.out <- b:
			case <-g.stop:
				return
			}
		case <-g.stop:
			return
		}
	}
}

// TestFaultRealInotifyQueueOverflowRelists overflows the kernel's inotify
// queue for real (more events than fs.inotify.max_queued_events while the
// reader is held back), creating files whose events are lost, and checks the
// real backend reports the overflow and the Source relists and finds them.
func TestFaultRealInotifyQueueOverflowRelists(t *testing.T) {
	raw, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	maxQueued, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if maxQueued > 200000 {
		t.Skipf("fs.inotify.max_queued_events is %d: too many events to overflow in a test", maxQueued)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeFile(t, a, podYAML("a", "img"))
	writeFile(t, b, podYAML("b", "img"))
	s := newTestSource(t, dir, nil) // relists hourly: a relist now is the overflow's
	gates := make(chan *gatedWatcher, 4)
	s.newWatcher = func(p string) (watcher, error) {
		w, err := newPlatformWatcher(p)
		if err != nil {
			return nil, err
		}
		g := &gatedWatcher{w: w, out: make(chan watchBatch), open: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
		go g.forward()
		gates <- g
		return g, nil
	}
	h := start(t, s)
	if snap := h.next(); !snap.Relist || len(snap.Files) != 2 {
		t.Fatalf("initial: %s", describe(snap))
	}
	g := <-gates

	// Alternate two names so the kernel cannot merge consecutive events.
	// The held-back reader may hold one 64 KiB read (about 2,000 of these
	// events) besides the kernel's queue: queue far more than both.
	total := maxQueued + 10000
	for i := range total {
		p, mode := a, os.FileMode(0o644)
		if i%2 == 1 {
			p = b
		}
		if i%4 >= 2 {
			mode = 0o640
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	// Past the overflow: these creations are never reported.
	for i := range 3 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("lost-%d.yaml", i)), podYAML(fmt.Sprintf("lost-%d", i), "img"))
	}
	close(g.open)
	start := time.Now()
	snap := h.waitFor("a relist with the files whose events were lost", func(s types.Snapshot) bool {
		_, ok := fileIn(s, "lost-2.yaml")
		return s.Relist && ok
	})
	if !snap.Watch.Up {
		t.Errorf("watch down after an overflow: %s", describe(snap))
	}
	for i := range 3 {
		if f, ok := fileIn(snap, fmt.Sprintf("lost-%d.yaml", i)); !ok || f.Pod == nil {
			t.Errorf("lost-%d.yaml: %+v", i, f)
		}
	}
	select {
	case <-gates:
		t.Errorf("the overflow restarted the watch; it should only relist")
	default:
	}
	t.Logf("%d events queued against max_queued_events %d; relist %v after the reader resumed", total, maxQueued, time.Since(start).Round(time.Millisecond))
}

// More watch events than a snapshot keeps: its Events are nil (unknown),
// not cut short, and the next snapshot keeps them again.
func TestTooManyEventsAreUnknown(t *testing.T) {
	dir := t.TempDir()
	s := newTestSource(t, dir, nil)
	w := newFakeWatcher()
	s.newWatcher = func(string) (watcher, error) { return w, nil }
	h := start(t, s)
	h.next()

	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img"))
	var evs []rawEvent
	for i := range maxEvents + 1 {
		name := fmt.Sprintf("gone-%d.yaml", i) // alternate, so that none folds
		evs = append(evs, rawEvent{on: onPath, name: name, op: opCreate}, rawEvent{on: onPath, name: name, op: opRemove})
	}
	w.push(t, watchBatch{events: append(evs, rawEvent{on: onPath, name: "a.yaml", op: opMovedTo})})
	if snap := h.next(); snap.Relist || snap.Events != nil {
		t.Fatalf("after %d events: relist=%v, %d events kept; want a watch snapshot with Events nil", len(evs)+1, snap.Relist, len(snap.Events))
	}
	w.push(t, watchBatch{events: []rawEvent{{on: onPath, name: "a.yaml", op: opChmod}}})
	if snap := h.next(); len(snap.Events) != 1 || snap.Events[0] != (types.WatchEvent{Name: "a.yaml", Attrib: true}) {
		t.Fatalf("the next snapshot's events: %+v, want a.yaml's chmod", snap.Events)
	}
}
