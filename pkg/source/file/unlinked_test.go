package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

func TestUnlinkedLiveDirectory(t *testing.T) {
	dir := t.TempDir()
	if got, err := Unlinked(dir); err != nil || got {
		t.Errorf("Unlinked(live dir) = %v, %v; want false, nil", got, err)
	}
	f := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Unlinked(f); err != nil || got {
		t.Errorf("Unlinked(live file) = %v, %v; want false, nil", got, err)
	}
}

func TestUnlinkedMissingIsAnError(t *testing.T) {
	got, err := Unlinked(filepath.Join(t.TempDir(), "gone"))
	if got || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Unlinked(missing) = %v, %v; want false, ErrNotExist", got, err)
	}
}

// A directory kept open after rmdir is what a hostPath mount point looks
// like once the host deleted the directory: /proc/self/fd/N resolves to the
// nameless inode, as the mount point does inside the pod.
func TestUnlinkedDeletedDirectory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("link counts are read on Linux only")
	}
	dir := filepath.Join(t.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Unlinked("/proc/self/fd/" + strconv.Itoa(int(d.Fd())))
	if err != nil || !got {
		t.Errorf("Unlinked(deleted dir) = %v, %v; want true, nil", got, err)
	}
}
