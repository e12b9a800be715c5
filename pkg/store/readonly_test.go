package store

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A state dir that can be read but not written still gives its Events,
// and nothing in it changes: not the log (not even a torn tail is cut
// off), not the lock file.
func TestOpenReadOnlyLoadsWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{Pod: "writer"}, newClock())
	write(t, s, event(name(1), 1, t0))
	write(t, s, event(name(2), 1, t0))
	write(t, s, event(name(1), 3, t0.Add(time.Minute)))
	closeStore(t, s)
	// A torn last append, as a crash leaves it.
	f, err := os.OpenFile(logPath(dir), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"torn"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	before := snapshotDir(t, dir)

	ro, err := OpenReadOnly(dir, Options{}, newClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ro.ReadOnly() {
		t.Error("ReadOnly() false for a store OpenReadOnly opened")
	}
	equalCounts(t, "read-only store", ro.Events(), map[string]int32{name(1): 3, name(2): 1})
	if err := ro.Write(context.Background(), event(name(3), 1, t0), false); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Write to a read-only store = %v, want ErrReadOnly", err)
	}
	closeStore(t, ro)
	closeStore(t, ro) // idempotent
	if after := snapshotDir(t, dir); !equalSnapshots(before, after) {
		t.Errorf("the read-only open changed the state dir:\nbefore %q\nafter  %q", before, after)
	}
}

func TestOpenReadOnlyOfAnEmptyOrNewDir(t *testing.T) {
	dir := t.TempDir()
	// No lock file: nothing was ever written here.
	if s, err := OpenReadOnly(dir, Options{}, newClock(), nil); s != nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly without a lock file = %v, %v; want fs.ErrNotExist", s, err)
	}
	// A lock and no log: an empty store.
	if err := os.WriteFile(lockPath(dir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenReadOnly(dir, Options{}, newClock(), nil)
	if err != nil || len(s.Events()) != 0 {
		t.Fatalf("OpenReadOnly with no log = %v; want an empty store", err)
	}
	closeStore(t, s)
}

func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[n.Name()] = b
	}
	return out
}

func equalSnapshots(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}
