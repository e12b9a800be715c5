package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for tc, dir := range map[string]string{
		"under a regular file": filepath.Join(file, "state"),
		"a regular file":       file,
		"in /proc":             "/proc/podwatch-store-test",
	} {
		t.Run(tc, func(t *testing.T) {
			s, err := Open(dir, Options{}, newClock(), nil)
			if s != nil || err == nil {
				t.Fatalf("Open(%s) = %v, %v; want an error", dir, s, err)
			}
			if !strings.HasPrefix(err.Error(), "store: state dir "+dir) {
				t.Errorf("error %q does not name the folder first", err)
			}
			if errors.Is(err, ErrLocked) || errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v matches the wrong sentinel", err)
			}
			if err := SaveJSON(dir, "state.json", 1); err == nil || !strings.Contains(err.Error(), dir) {
				t.Errorf("SaveJSON in %s = %v, want an error naming it", dir, err)
			}
		})
	}
	// The exact cause stays visible to errors.Is.
	_, err := Open(filepath.Join(file, "state"), Options{}, nil, nil)
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Open under a file = %v, want ENOTDIR", err)
	}
}

func TestReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits do not stop root; TestUnusableDir forces the failure with ENOTDIR and /proc instead")
	}
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(parent, 0o700) })
	for _, dir := range []string{parent, filepath.Join(parent, "state")} {
		_, err := Open(dir, Options{}, newClock(), nil)
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), dir) {
			t.Errorf("Open(%s) = %v, want fs.ErrPermission naming it", dir, err)
		}
	}
}
