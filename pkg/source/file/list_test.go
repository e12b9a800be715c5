//go:build linux

package file

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/manifest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// listOnce lists s's path without running the watch.
func listOnce(s *Source) types.Snapshot {
	s.relist()
	return s.snapshot(true, false)
}

func TestListSortsBytewiseAndSkipsDotNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.yaml", "B.yaml", "a.yaml", "_x.yaml", "10.yaml", "9.yaml", ".hidden.yaml", "..data"} {
		writeFile(t, filepath.Join(dir, n), podYAML("p"+n[:1], "img"))
	}
	s := newTestSource(t, dir, clocktesting.NewFakeClock(t0))
	snap := listOnce(s)
	want := []string{"10.yaml", "9.yaml", "B.yaml", "_x.yaml", "a.yaml", "b.yaml"}
	if got := namesOf(snap); !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	f, _ := fileIn(snap, "a.yaml")
	if f.Pod == nil || f.Pod.Key != "default/pa-"+testNode || f.Err != nil || f.ReadErr != nil || f.NotRegular {
		t.Errorf("a.yaml = %+v", f)
	}
	if f.Path != filepath.Join(dir, "a.yaml") || !f.ChangedAt.Equal(t0) || f.Complete {
		t.Errorf("a.yaml path/changedAt/complete = %q %v %v; a listed file is not complete", f.Path, f.ChangedAt, f.Complete)
	}
	if snap.PathErr != nil || snap.Single || !snap.Relist || snap.Path != dir {
		t.Errorf("snapshot = %s", describe(snap))
	}
}

func TestListInvalidManifest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), invalidYAML)
	snap := listOnce(newTestSource(t, dir, nil))
	f, ok := fileIn(snap, "bad.yaml")
	var merr *manifest.Error
	if !ok || f.Pod != nil || !errors.As(f.Err, &merr) || f.ReadErr != nil {
		t.Fatalf("bad.yaml = %+v, want Err a *manifest.Error", f)
	}
}

func TestListDoesNotEnterSubdirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", "x.yaml"), podYAML("x", "img"))
	s := newTestSource(t, dir, nil)
	opens := countOpens(s)
	snap := listOnce(s)
	if got := namesOf(snap); !slices.Equal(got, []string{"sub"}) {
		t.Fatalf("names = %q, want just the subdirectory", got)
	}
	if f := snap.Files[0]; !f.NotRegular || f.Mode != fs.ModeDir || f.Pod != nil || f.Err != nil {
		t.Errorf("sub = %+v, want NotRegular directory", f)
	}
	if opens.Load() != 0 {
		t.Errorf("opened %d files, want none", opens.Load())
	}
}

func TestListFIFOAndSocketAreNeverOpened(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	writeFile(t, filepath.Join(dir, "ok.yaml"), podYAML("ok", "img"))
	s := newTestSource(t, dir, nil)
	opens := countOpens(s)

	done := make(chan types.Snapshot, 1)
	go func() { done <- listOnce(s) }()
	var snap types.Snapshot
	select {
	case snap = <-done:
	case <-time.After(waitLimit):
		t.Fatal("listing a directory with a FIFO hangs")
	}
	for name, mode := range map[string]fs.FileMode{"fifo.yaml": fs.ModeNamedPipe, "sock.yaml": fs.ModeSocket} {
		f, ok := fileIn(snap, name)
		if !ok || !f.NotRegular || f.Mode != mode || f.ReadErr != nil || f.Err != nil {
			t.Errorf("%s = %+v, want NotRegular %v", name, f, mode)
		}
	}
	if opens.Load() != 1 {
		t.Errorf("opened %d files, want only ok.yaml", opens.Load())
	}
}

// The kubelet's os.Stat fails on a dangling or looping symlink and it skips
// the name: not a manifest, and not a read failure of podwatch's either.
func TestListDanglingAndLoopingSymlinks(t *testing.T) {
	dir := t.TempDir()
	for name, target := range map[string]string{
		"dangling.yaml": "nowhere.yaml",
		"loop.yaml":     "loop.yaml",
		"through.yaml":  "a-file/x", // ENOTDIR on the way
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "a-file"), "x")
	other := filepath.Join(t.TempDir(), "real.yaml")
	writeFile(t, other, podYAML("real", "img"))
	if err := os.Symlink(other, filepath.Join(dir, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	snap := listOnce(newTestSource(t, dir, nil))
	for _, name := range []string{"dangling.yaml", "loop.yaml", "through.yaml"} {
		f, ok := fileIn(snap, name)
		if !ok || !f.NotRegular || f.Mode != fs.ModeSymlink || f.ReadErr != nil || f.Err != nil || f.Pod != nil {
			t.Errorf("%s = %+v, want NotRegular symlink with no error", name, f)
		}
	}
	if f, _ := fileIn(snap, "linked.yaml"); f.Pod == nil {
		t.Errorf("linked.yaml (symlink to a manifest) = %+v, want decoded", f)
	}
}

func TestListTooLargeIsNeverRead(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int64{"max.yaml": manifest.MaxSize, "huge.yaml": 1 << 30} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		f.Close()
	}
	s := newTestSource(t, dir, nil)
	opens := countOpens(s)
	snap := listOnce(s)
	for _, name := range []string{"huge.yaml", "max.yaml"} {
		f, _ := fileIn(snap, name)
		if !errors.Is(f.Err, manifest.ErrTooLarge) || f.Pod != nil || f.ReadErr != nil {
			t.Errorf("%s = %+v, want Err wrapping ErrTooLarge", name, f)
		}
	}
	if opens.Load() != 0 {
		t.Errorf("opened %d too-large files, want none", opens.Load())
	}
}

func TestListReadErrorIsPodwatchsOwn(t *testing.T) {
	dir := t.TempDir()
	denied := filepath.Join(dir, "denied.yaml")
	writeFile(t, denied, podYAML("d", "img"))
	writeFile(t, filepath.Join(dir, "ok.yaml"), podYAML("ok", "img"))
	s := newTestSource(t, dir, nil)
	s.openFile = func(name string, flag int, perm fs.FileMode) (*os.File, error) {
		if name == denied {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
		return os.OpenFile(name, flag, perm)
	}
	snap := listOnce(s)
	f, _ := fileIn(snap, "denied.yaml")
	if !errors.Is(f.ReadErr, fs.ErrPermission) || f.Err != nil || f.Pod != nil || f.NotRegular {
		t.Fatalf("denied.yaml = %+v, want ReadErr EACCES and no verdict", f)
	}
	if f, _ := fileIn(snap, "ok.yaml"); f.Pod == nil {
		t.Errorf("ok.yaml = %+v, want decoded", f)
	}
	// Readable again: read at once, though its identity did not change.
	s.openFile = os.OpenFile
	if f, _ := fileIn(listOnce(s), "denied.yaml"); f.Pod == nil || f.ReadErr != nil {
		t.Errorf("denied.yaml once readable = %+v, want decoded", f)
	}
}

func TestListPermissionDeniedForReal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: chmod 000 denies root nothing; the injected-open test covers the mapping")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "denied.yaml")
	writeFile(t, p, podYAML("d", "img"))
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	f, _ := fileIn(listOnce(newTestSource(t, dir, nil)), "denied.yaml")
	if !errors.Is(f.ReadErr, fs.ErrPermission) || f.Err != nil {
		t.Fatalf("denied.yaml = %+v, want ReadErr EACCES", f)
	}
}

func TestListPathErrorsKeepFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "manifests")
	s := newTestSource(t, dir, nil)
	if snap := listOnce(s); !errors.Is(snap.PathErr, fs.ErrNotExist) || len(snap.Files) != 0 {
		t.Fatalf("missing path: %s, want PathErr not-exist", describe(snap))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img"))
	if snap := listOnce(s); snap.PathErr != nil || len(snap.Files) != 1 {
		t.Fatalf("after mkdir: %s", describe(snap))
	}

	s.openFile = func(name string, flag int, perm fs.FileMode) (*os.File, error) {
		if name == dir {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
		return os.OpenFile(name, flag, perm)
	}
	snap := listOnce(s)
	if !errors.Is(snap.PathErr, fs.ErrPermission) || len(snap.Files) != 1 {
		t.Fatalf("unreadable dir: %s, want PathErr EACCES and the file kept", describe(snap))
	}

	s.openFile = os.OpenFile
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	snap = listOnce(s)
	if !errors.Is(snap.PathErr, fs.ErrNotExist) || len(snap.Files) != 1 {
		t.Fatalf("removed dir: %s, want PathErr not-exist and the last files kept", describe(snap))
	}
}

func TestListPathNeitherFileNorDirectory(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "manifests")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	snap := listOnce(newTestSource(t, fifo, nil))
	if snap.PathErr == nil || errors.Is(snap.PathErr, fs.ErrNotExist) {
		t.Fatalf("FIFO path: %s, want a PathErr", describe(snap))
	}
}

// Only what changed is read, and only what reads differently is decoded.
func TestRelistReadsOnlyChangedFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		writeFile(t, filepath.Join(dir, n), podYAML(n[:1], "img"))
	}
	clk := clocktesting.NewFakeClock(t0)
	s := newTestSource(t, dir, clk)
	// The files are old news: their identity can be trusted at once.
	s.wallNow = func() time.Time { return time.Now().Add(time.Hour) }
	opens, decodes := countOpens(s), countDecodes(s)
	first := listOnce(s)
	if opens.Load() != 3 || decodes.Load() != 3 {
		t.Fatalf("first list: %d opens, %d decodes, want 3 and 3", opens.Load(), decodes.Load())
	}

	clk.Step(time.Minute)
	again := listOnce(s)
	if opens.Load() != 3 || decodes.Load() != 3 {
		t.Fatalf("unchanged relist: %d opens, %d decodes, want none more", opens.Load(), decodes.Load())
	}
	if again.Files[0].Pod != first.Files[0].Pod || !again.Files[0].ChangedAt.Equal(t0) {
		t.Errorf("unchanged file lost its cached pod or ChangedAt")
	}

	// Same bytes under a new inode: read to hash, not decoded, not a change.
	moveIn(t, dir, "b.yaml", podYAML("b", "img"))
	snap := listOnce(s)
	if opens.Load() != 4 || decodes.Load() != 3 {
		t.Fatalf("same-bytes rename: %d opens, %d decodes, want 4 and 3", opens.Load(), decodes.Load())
	}
	if f := snap.Files[1]; !f.ChangedAt.Equal(t0) || f.Pod != first.Files[1].Pod {
		t.Errorf("b.yaml: ChangedAt moved to %v (or pod re-decoded) though its bytes did not change", f.ChangedAt)
	}

	// From here file times are real again: the rewrite is seconds old, not
	// quiet for SettleDelay, so not complete.
	s.wallNow = time.Now
	writeFile(t, filepath.Join(dir, "a.yaml"), podYAML("a", "img:2"))
	snap = listOnce(s)
	if decodes.Load() != 4 {
		t.Fatalf("rewrite: %d decodes, want 4", decodes.Load())
	}
	f := snap.Files[0]
	if image(*f) != "img:2" || !f.ChangedAt.Equal(clk.Now()) || f.Complete {
		t.Errorf("rewritten a.yaml = %+v: want new image, ChangedAt now, not complete (no event seen)", f)
	}
}

// A same-size rewrite right after a list may keep size, mtime and ctime (file
// times tick coarsely): it must still be seen.
func TestRelistSeesRacySameSizeRewrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	writeFile(t, p, podYAML("a", "img:1"))
	s := newTestSource(t, dir, nil)
	opens, decodes := countOpens(s), countDecodes(s)
	listOnce(s)
	writeFile(t, p, podYAML("a", "img:2"))
	if f := listOnce(s).Files[0]; image(*f) != "img:2" {
		t.Fatalf("same-size rewrite missed: image %q", image(*f))
	}
	// Still racy: read again, but the same bytes are not decoded again.
	listOnce(s)
	if opens.Load() != 3 || decodes.Load() != 2 {
		t.Errorf("%d opens, %d decodes; want 3 and 2", opens.Load(), decodes.Load())
	}
}

func TestListSingleFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pod.yaml")
	writeFile(t, p, podYAML("pod", "img"))
	writeFile(t, filepath.Join(dir, "other.yaml"), podYAML("other", "img"))
	snap := listOnce(newTestSource(t, p, nil))
	if !snap.Single || !slices.Equal(namesOf(snap), []string{"pod.yaml"}) || snap.Files[0].Path != p || snap.Files[0].Pod == nil {
		t.Fatalf("single file: %s", describe(snap))
	}
}

// Files untouched for SettleDelay before they are first read are quiet: the
// manifests found at start are published at once, not a settle delay later.
func TestQuietFileIsCompleteAtFirstList(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "old.yaml"), podYAML("old", "img"))
	past := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(dir, "old.yaml"), past, past); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "new.yaml"), podYAML("new", "img"))
	s := newTestSource(t, dir, nil)
	snap := listOnce(s)
	if len(snap.Files) != 2 || !snap.Files[1].Complete || snap.Files[0].Complete {
		t.Fatalf("files = %+v: want old.yaml complete (quiet a minute), new.yaml not", snap.Files)
	}
}

// ListStarted says when the last list began, on the source's clock: the
// relist detector tells podwatch's own full reads by it.
func TestListStarted(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := newTestSource(t, t.TempDir(), clk)
	if got := s.ListStarted(); !got.IsZero() {
		t.Fatalf("before a list: %v, want zero", got)
	}
	listOnce(s)
	clk.Step(time.Minute)
	if got := s.ListStarted(); !got.Equal(t0) {
		t.Errorf("after a list at %v: %v", t0, got)
	}
	listOnce(s)
	if got := s.ListStarted(); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("after a second list: %v, want %v", got, t0.Add(time.Minute))
	}
}
