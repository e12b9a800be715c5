package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestSecondWriterGetsErrLocked(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	s2, err := Open(dir, Options{}, newClock(), nil)
	if s2 != nil || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, %v; want ErrLocked", s2, err)
	}
	want := "store: state dir " + dir + " is locked by another podwatch (pid " + strconv.Itoa(os.Getpid()) + ")"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// A reader needs no lock.
	if _, err := ReadEvents(dir); err != nil {
		t.Errorf("ReadEvents while locked: %v", err)
	}
	closeStore(t, s)
	s2 = open(t, dir, Options{}, newClock())
	closeStore(t, s2)
}

func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(logPath(dir), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := ReadEvents(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadEvents of a FIFO = %v, want an error", err)
	}
	if s, err := Open(dir, Options{}, newClock(), nil); s != nil || err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open with a FIFO log = %v, %v; want an error", s, err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "state.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := LoadJSON(dir, "state.json", &v); err == nil || errors.Is(err, ErrCorrupt) {
		t.Errorf("LoadJSON of a FIFO = %v, want a plain error", err)
	}
}
