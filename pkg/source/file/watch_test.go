//go:build linux

package file

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

func TestInitialSnapshot(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img"))
	h := start(t, newTestSource(t, dir, nil))
	snap := h.next()
	if !snap.Relist || !snap.Watch.Up || snap.Watch.Err != nil || snap.PathErr != nil {
		t.Fatalf("initial snapshot: %s", describe(snap))
	}
	if f, _ := fileIn(snap, "a.yaml"); f.Pod == nil {
		t.Fatalf("a.yaml not decoded: %s", describe(snap))
	}
}

func TestCreateByRenameIsCompleteAtOnce(t *testing.T) {
	dir := t.TempDir()
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	before := time.Now()
	moveIn(t, dir, "a.yaml", podYAML("a", "img"))
	snap := h.waitFor("a.yaml", hasImage("a.yaml", "img"))
	f, _ := fileIn(snap, "a.yaml")
	if snap.Relist || !f.Complete || f.ChangedAt.Before(before) {
		t.Fatalf("moved-in file: relist=%v complete=%v changedAt=%v (before %v); want a watch snapshot, complete",
			snap.Relist, f.Complete, f.ChangedAt, before)
	}
}

// A writer pausing between two chunks, read late: the first chunk's
// bytes are older than SettleDelay when podwatch reads them (its clock an
// hour on here), and the file is still open, so not complete. Taken for
// whole, its UPDATE would be said as certain, though the kubelet, reading
// late too, may take in only the second chunk.
func TestFileOpenForWritingIsNotCompleteReadLate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	writeFile(t, p, podYAML("a", "img:1"))
	s := newTestSource(t, dir, nil)
	s.wallNow = func() time.Time { return time.Now().Add(time.Hour) }
	h := start(t, s)
	first := h.next()
	old, _ := fileIn(first, "a.yaml")

	w, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(podYAML("a", "img:2")); err != nil {
		t.Fatal(err)
	}
	snap := h.waitFor("a.yaml written, open", func(s types.Snapshot) bool {
		f, _ := fileIn(s, "a.yaml")
		return image(f) == "img:2"
	})
	if f, _ := fileIn(snap, "a.yaml"); f.Complete || !f.ChangedAt.After(old.ChangedAt) {
		t.Fatalf("a file still open for writing, its bytes older than the settle delay: %+v; want it incomplete", f)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h.waitFor("a.yaml complete on close", func(s types.Snapshot) bool {
		f, _ := fileIn(s, "a.yaml")
		return f.Complete && image(f) == "img:2"
	})
}

func TestWriteInPlaceIsCompleteOnClose(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	writeFile(t, p, podYAML("a", "img:1"))
	h := start(t, newTestSource(t, dir, nil))
	first := h.next()
	old, _ := fileIn(first, "a.yaml")

	content := podYAML("a", "img:2")
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(content[:20]); err != nil {
		t.Fatal(err)
	}
	snap := h.waitFor("a.yaml half written", func(s types.Snapshot) bool {
		f, _ := fileIn(s, "a.yaml")
		return f.ChangedAt.After(old.ChangedAt)
	})
	if f, _ := fileIn(snap, "a.yaml"); f.Complete || f.Pod != nil {
		t.Fatalf("half-written file: %+v; want incomplete and invalid", f)
	}
	if _, err := w.WriteString(content[20:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	snap = h.waitFor("a.yaml complete with img:2", func(s types.Snapshot) bool {
		f, _ := fileIn(s, "a.yaml")
		return f.Complete && image(f) == "img:2"
	})
	if snap.Relist {
		t.Errorf("the change came from a relist, not the watch")
	}
}

func TestChmodOnlyIsNotDecodedAgain(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	writeFile(t, p, podYAML("a", "img"))
	s := newTestSource(t, dir, nil)
	decodes := countDecodes(s)
	h := start(t, s)
	first := h.next()
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	snap := h.next() // the IN_ATTRIB
	if snap.Relist {
		t.Fatalf("chmod caused a relist: %s", describe(snap))
	}
	// The event says it brought no content: ChangedAt does not date it.
	if want := []types.WatchEvent{{Name: "a.yaml", Attrib: true}}; !slices.Equal(snap.Events, want) {
		t.Errorf("after chmod: events %+v, want %+v", snap.Events, want)
	}
	a, b := first.Files[0], snap.Files[0]
	if decodes.Load() != 1 || a.Pod != b.Pod || !a.ChangedAt.Equal(b.ChangedAt) {
		t.Fatalf("after chmod: %d decodes (want 1), same pod %v, ChangedAt %v -> %v",
			decodes.Load(), a.Pod == b.Pod, a.ChangedAt, b.ChangedAt)
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img"))
	writeFile(t, filepath.Join(dir, "b.yaml"), podYAML("b", "img"))
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	snap := h.waitFor("a.yaml gone", func(s types.Snapshot) bool { _, ok := fileIn(s, "a.yaml"); return !ok })
	if snap.Relist || !slices.Equal(namesOf(snap), []string{"b.yaml"}) {
		t.Fatalf("after remove: %s", describe(snap))
	}
}

// A dot regular file (a writer's temp file, an editor's swap file) is
// neither a manifest nor a reason to relist: the next snapshot is the one
// the visible file causes, and it is no relist.
func TestDotFilesIgnoredWithoutRelist(t *testing.T) {
	dir := t.TempDir()
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	moveIn(t, dir, ".a.yaml.swp", podYAML("a", "img"))
	moveIn(t, dir, "b.yaml", podYAML("b", "img"))
	snap := h.next()
	if snap.Relist || !slices.Equal(namesOf(snap), []string{"b.yaml"}) {
		t.Fatalf("after a dot file and b.yaml: %s; want a watch snapshot with b.yaml only", describe(snap))
	}
}

// An atomic writer (a projected volume, a config tool) keeps the real files
// in a dot directory and swaps a "..data" symlink: the visible names do not
// change, so only the dot event says anything happened.
func TestDataSymlinkSwapIsSeen(t *testing.T) {
	dir := t.TempDir()
	mk := func(version, img string) {
		d := filepath.Join(dir, version)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(d, "pod.yaml"), podYAML("pod", img))
	}
	mk("..2026_a", "img:a")
	if err := os.Symlink("..2026_a", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/pod.yaml", filepath.Join(dir, "pod.yaml")); err != nil {
		t.Fatal(err)
	}
	h := start(t, newTestSource(t, dir, nil))
	if snap := h.next(); !slices.Equal(namesOf(snap), []string{"pod.yaml"}) || image(*snap.Files[0]) != "img:a" {
		t.Fatalf("initial: %s", describe(snap))
	}
	mk("..2026_b", "img:b")
	if err := os.Symlink("..2026_b", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	snap := h.waitFor("pod.yaml through the new ..data", hasImage("pod.yaml", "img:b"))
	if !snap.Relist || !snap.Extra || !slices.Equal(namesOf(snap), []string{"pod.yaml"}) {
		t.Fatalf("after the swap: %s; want podwatch's own relist (Extra)", describe(snap))
	}
}

// emacs's lock is a dangling dot symlink, made as the auto-save file is
// written: podwatch lists for the symlink, which the kubelet ignores, and
// the kubelet takes the auto-save file in on its watch event. The list is
// Extra and keeps that event.
func TestOwnRelistKeepsTheWatchEvents(t *testing.T) {
	dir := t.TempDir()
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	if err := os.Symlink("user@node-1.4242:1700000000", filepath.Join(dir, ".#x.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "#x.yaml#"), podYAML("x", "img:wip"))
	var got []types.WatchEvent
	sawExtra := false
	h.waitFor("the auto-save file", func(s types.Snapshot) bool {
		if s.Relist && !s.Extra {
			t.Fatalf("a dot symlink made a relist that is not Extra: %s", describe(s))
		}
		if s.Events == nil {
			t.Fatalf("a snapshot without its events: %s", describe(s))
		}
		sawExtra = sawExtra || s.Extra
		got = append(got, s.Events...)
		_, ok := fileIn(s, "#x.yaml#")
		return ok && slices.Contains(got, types.WatchEvent{Name: "#x.yaml#"})
	})
	if !sawExtra {
		// The symlink's event came alone: list once more for it, as the
		// source must, so the test sees an Extra relist either way.
		if err := os.Remove(filepath.Join(dir, ".#x.yaml")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("user@node-1.4242:1700000001", filepath.Join(dir, ".#x.yaml")); err != nil {
			t.Fatal(err)
		}
		h.waitFor("the relist for the symlink", func(s types.Snapshot) bool {
			if s.Relist && (!s.Extra || s.Events == nil) {
				t.Fatalf("the symlink's relist: %s; want Extra with its events", describe(s))
			}
			return s.Relist
		})
	}
}

func TestDirectoryDeletedAndRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img"))
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	snap := h.waitFor("path missing", func(s types.Snapshot) bool { return errors.Is(s.PathErr, fs.ErrNotExist) })
	if snap.Watch.Up || !errors.Is(snap.Watch.Err, fs.ErrNotExist) || snap.Watch.Backoff != 0 {
		t.Errorf("watch while the path is missing: %+v; want down, not-exist, no backoff", snap.Watch)
	}

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "b.yaml"), podYAML("b", "img"))
	recreated := time.Now()
	snap = h.waitFor("b.yaml in the new directory", hasImage("b.yaml", "img"))
	if took := time.Since(recreated); took > 2500*time.Millisecond {
		t.Errorf("recreated directory picked up after %v; want about a second", took)
	}
	if snap.PathErr != nil || !snap.Watch.Up || !slices.Equal(namesOf(snap), []string{"b.yaml"}) {
		t.Fatalf("after recreate: %s", describe(snap))
	}
	// The new directory is watched.
	moveIn(t, dir, "c.yaml", podYAML("c", "img"))
	snap = h.waitFor("c.yaml", hasImage("c.yaml", "img"))
	if f, _ := fileIn(snap, "c.yaml"); !f.Complete {
		t.Errorf("c.yaml not seen by the watch: %+v", f)
	}
}

func TestSymlinkedPathSwappedAtomically(t *testing.T) {
	root := t.TempDir()
	for v, img := range map[string]string{"..v1": "img:1", "..v2": "img:2"} {
		if err := os.Mkdir(filepath.Join(root, v), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, v, "a.yaml"), podYAML("a", img))
	}
	path := filepath.Join(root, "manifests")
	if err := os.Symlink("..v1", path); err != nil {
		t.Fatal(err)
	}
	h := start(t, newTestSource(t, path, nil))
	if snap := h.next(); image(*snap.Files[0]) != "img:1" {
		t.Fatalf("initial: %s", describe(snap))
	}
	if err := os.Symlink("..v2", filepath.Join(root, "manifests.tmp")); err != nil {
		t.Fatal(err)
	}
	swapped := time.Now()
	if err := os.Rename(filepath.Join(root, "manifests.tmp"), path); err != nil {
		t.Fatal(err)
	}
	snap := h.waitFor("a.yaml from ..v2", hasImage("a.yaml", "img:2"))
	if took := time.Since(swapped); took > 2*time.Second || !snap.Relist || !snap.Watch.Up {
		t.Errorf("swap seen after %v: %s; want a relist within a second", took, describe(snap))
	}
	// The old target changing means nothing now; the new one is watched.
	if err := os.RemoveAll(filepath.Join(root, "..v1")); err != nil {
		t.Fatal(err)
	}
	moveIn(t, filepath.Join(root, "..v2"), "b.yaml", podYAML("b", "img"))
	snap = h.waitFor("b.yaml in ..v2", hasImage("b.yaml", "img"))
	if f, _ := fileIn(snap, "b.yaml"); !f.Complete || snap.Relist || image(*snap.Files[0]) != "img:2" {
		t.Fatalf("after writing into the new target: %s", describe(snap))
	}
}

func TestFileTurnsInvalidAndBack(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img:1"))
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	moveIn(t, dir, "a.yaml", invalidYAML)
	snap := h.waitFor("a.yaml invalid", func(s types.Snapshot) bool { f, _ := fileIn(s, "a.yaml"); return f.Err != nil })
	if f, _ := fileIn(snap, "a.yaml"); f.Pod != nil || f.ReadErr != nil || !f.Complete {
		t.Fatalf("invalid a.yaml = %+v", f)
	}
	moveIn(t, dir, "a.yaml", podYAML("a", "img:2"))
	snap = h.waitFor("a.yaml valid again", hasImage("a.yaml", "img:2"))
	if f, _ := fileIn(snap, "a.yaml"); f.Err != nil {
		t.Fatalf("valid again but Err = %v", f.Err)
	}
}

func TestFIFOAndSocketDoNotHang(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a.fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, newTestSource(t, dir, nil))
	if f, _ := fileIn(h.next(), "a.fifo"); !f.NotRegular || f.Mode != fs.ModeNamedPipe {
		t.Fatalf("a.fifo = %+v", f)
	}
	// One made while watched, then a socket, then a manifest: all seen in turn.
	if err := syscall.Mkfifo(filepath.Join(dir, "b.fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.waitFor("b.fifo", func(s types.Snapshot) bool { f, ok := fileIn(s, "b.fifo"); return ok && f.NotRegular })
	l, err := net.Listen("unix", filepath.Join(dir, "c.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h.waitFor("c.sock", func(s types.Snapshot) bool { f, ok := fileIn(s, "c.sock"); return ok && f.Mode == fs.ModeSocket })
	moveIn(t, dir, "d.yaml", podYAML("d", "img"))
	h.waitFor("d.yaml", hasImage("d.yaml", "img"))
}

func TestSubdirectoryCreatedIsNotEntered(t *testing.T) {
	dir := t.TempDir()
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sub, "x.yaml"), podYAML("x", "img"))
	moveIn(t, dir, "y.yaml", podYAML("y", "img"))
	snap := h.waitFor("y.yaml", hasImage("y.yaml", "img"))
	if !slices.Equal(namesOf(snap), []string{"sub", "y.yaml"}) || !snap.Files[0].NotRegular {
		t.Fatalf("after mkdir sub: %s", describe(snap))
	}
}

func TestSingleFilePath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pod.yaml")
	writeFile(t, p, podYAML("pod", "img:1"))
	writeFile(t, filepath.Join(dir, "other.yaml"), podYAML("other", "img"))
	h := start(t, newTestSource(t, p+"/", nil))
	snap := h.next()
	if !snap.Single || snap.Path != p || !slices.Equal(namesOf(snap), []string{"pod.yaml"}) || !snap.Watch.Up {
		t.Fatalf("initial: %s", describe(snap))
	}

	// An editor saving by rename: the new inode is picked up, complete.
	moveIn(t, dir, "pod.yaml", podYAML("pod", "img:2"))
	snap = h.waitFor("img:2", hasImage("pod.yaml", "img:2"))
	if f := snap.Files[0]; !f.Complete || f.Path != p {
		t.Fatalf("after rename over: %+v", f)
	}
	// A sibling is no business of this source.
	moveIn(t, dir, "sibling.yaml", podYAML("sibling", "img"))
	// Written in place: seen through the new inode's watch.
	writeFile(t, p, podYAML("pod", "img:3"))
	snap = h.waitFor("img:3 complete", func(s types.Snapshot) bool {
		f, _ := fileIn(s, "pod.yaml")
		return image(f) == "img:3" && f.Complete
	})
	if len(snap.Files) != 1 || !snap.Single {
		t.Fatalf("after in-place write: %s", describe(snap))
	}

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	snap = h.waitFor("path missing", func(s types.Snapshot) bool { return errors.Is(s.PathErr, fs.ErrNotExist) })
	if !snap.Single || snap.Watch.Up {
		t.Fatalf("after remove: %s", describe(snap))
	}
}

// A burst of files arriving together yields a few snapshots, not one per
// file, and the last one has them all.
func TestBurstIsCoalesced(t *testing.T) {
	const n = 1000
	dir := t.TempDir()
	h := start(t, newTestSource(t, dir, nil))
	h.next()
	staging := t.TempDir()
	for i := range n {
		name := filepath.Join(staging, fmt.Sprintf("p%04d.yaml", i))
		writeFile(t, name, podYAML(fmt.Sprintf("p%04d", i), "img"))
	}
	// Run blocks on its first send until the burst is over.
	for i := range n {
		name := fmt.Sprintf("p%04d.yaml", i)
		if err := os.Rename(filepath.Join(staging, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	count := 0
	snap := h.waitFor("all files", func(s types.Snapshot) bool { count++; return len(s.Files) == n })
	if count > 10 {
		t.Errorf("%d snapshots for a burst of %d files; want a handful", count, n)
	}
	for _, f := range snap.Files {
		if f.Pod == nil || !f.Complete {
			t.Fatalf("%s = %+v", f.Name, f)
		}
	}
	if !slices.IsSorted(namesOf(snap)) {
		t.Error("files not sorted")
	}
}

// A vim-style save on real inotify: the manifest renamed to its backup,
// the new content written in place, the backup deleted. The snapshots'
// Events give every step in order, the writes folded into one.
func TestEventsKeepTheOrderOfASave(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "web.yaml")
	writeFile(t, p, podYAML("web", "img:1"))
	h := start(t, newTestSource(t, dir, nil))
	h.next()

	if err := os.Rename(p, p+"~"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, podYAML("web", "img:2"))
	if err := os.Remove(p + "~"); err != nil {
		t.Fatal(err)
	}
	var got []types.WatchEvent
	h.waitFor("the backup's delete", func(s types.Snapshot) bool {
		if s.Relist || s.Events == nil {
			t.Fatalf("a watch snapshot without its events: %s", describe(s))
		}
		got = append(got, s.Events...)
		return slices.Contains(got, types.WatchEvent{Name: "web.yaml~", Gone: true})
	})
	want := []types.WatchEvent{
		{Name: "web.yaml", Gone: true},
		{Name: "web.yaml~"},
		{Name: "web.yaml"},
		{Name: "web.yaml~", Gone: true},
	}
	// A snapshot boundary between a write's events splits the fold.
	got = slices.Compact(got)
	if !slices.Equal(got, want) {
		t.Errorf("events %+v, want %+v", got, want)
	}
}
