package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestSecondWriterGetsErrLocked(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{Pod: "podwatch-x7k2p"}, newClock())
	s2, err := Open(dir, Options{}, newClock(), nil)
	if s2 != nil || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, %v; want ErrLocked", s2, err)
	}
	var locked *LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("second Open error %T, want a *LockedError", err)
	}
	host, _ := os.Hostname()
	want := Holder{Host: host, Pod: "podwatch-x7k2p", Started: t0, PID: os.Getpid()}
	if locked.Dir != dir || !locked.Holder.Started.Equal(want.Started) || locked.Holder.Host != want.Host ||
		locked.Holder.Pod != want.Pod || locked.Holder.PID != want.PID {
		t.Errorf("locked error names %s held by %+v, want %s held by %+v", locked.Dir, locked.Holder, dir, want)
	}
	for _, part := range []string{"store: state dir " + dir + " is locked by another podwatch (", "pod podwatch-x7k2p", "host " + host, "started 2026-11-30T09:00:00Z"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	// A reader needs no lock.
	if _, err := ReadEvents(dir); err != nil {
		t.Errorf("ReadEvents while locked: %v", err)
	}
	closeStore(t, s)
	s2 = open(t, dir, Options{}, newClock())
	closeStore(t, s2)
}

// A lock file an older podwatch wrote holds its pid alone; the holder it
// names is still read, and a file with neither form names nobody.
func TestLockFileOfAnOlderPodwatch(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{}, newClock())
	// The held lock is on the inode; rewriting the content keeps it.
	if err := os.WriteFile(lockPath(dir), []byte("4321\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{}, newClock(), nil)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder != (Holder{PID: 4321}) {
		t.Fatalf("Open under a pid-only lock = %v, want a *LockedError naming pid 4321", err)
	}
	if want := "store: state dir " + dir + " is locked by another podwatch (pid 4321)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	for _, junk := range []string{"", "not a pid\n", "-3\n", "{\"pid\": \"x\"}", strings.Repeat("9", maxHolderBytes+1)} {
		if err := os.WriteFile(lockPath(dir), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir, Options{}, newClock(), nil)
		if !errors.As(err, &locked) || locked.Holder != (Holder{}) {
			t.Errorf("Open under a lock holding %.20q = %v, want a *LockedError naming nobody", junk, err)
		}
		if want := "store: state dir " + dir + " is locked by another podwatch"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
	closeStore(t, s)
}

// flock needs no write access: a store opened read-only holds the lock
// through a read-only descriptor, and keeps a writer and a second reader
// out until it closes.
func TestReadOnlyLockExcludesATwin(t *testing.T) {
	dir := t.TempDir()
	closeStore(t, open(t, dir, Options{Pod: "first"}, newClock()))
	ro, err := OpenReadOnly(dir, Options{}, newClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if flags, err := fcntlFlags(ro.lock); err != nil || flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		t.Fatalf("the read-only store's lock descriptor has flags %#o (%v), want O_RDONLY", flags, err)
	}
	if s, err := Open(dir, Options{}, newClock(), nil); s != nil || !errors.Is(err, ErrLocked) {
		t.Errorf("Open beside a read-only holder = %v, %v; want ErrLocked", s, err)
	}
	var locked *LockedError
	if s, err := OpenReadOnly(dir, Options{}, newClock(), nil); s != nil || !errors.As(err, &locked) || locked.Holder.Pod != "first" {
		t.Errorf("second OpenReadOnly = %v, %v; want a *LockedError naming the last writer", s, err)
	}
	closeStore(t, ro)
	closeStore(t, open(t, dir, Options{}, newClock()))
}

func fcntlFlags(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		var r uintptr
		var errno syscall.Errno
		r, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags = int(r)
		if errno != 0 {
			ferr = errno
		}
	}); err != nil {
		return 0, err
	}
	return flags, ferr
}

func TestAwaitLock(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	// No lock file: nobody ever held it. A free lock is taken before ctx is
	// looked at.
	if err := AwaitLock(stopped, filepath.Join(dir, "never"), clk, time.Second); err != nil {
		t.Fatalf("AwaitLock on a dir never locked = %v", err)
	}
	s := open(t, dir, Options{}, newClock())
	// Held: it waits, until ctx ends.
	if err := AwaitLock(stopped, dir, clk, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("AwaitLock on a held lock with ctx done = %v, want context.Canceled", err)
	}

	done := make(chan error, 1)
	go func() { done <- AwaitLock(context.Background(), dir, clk, time.Second) }()
	closeStore(t, s)
	// Each step is one more try; it must succeed within a few.
	deadline := time.Now().Add(10 * time.Second)
	for returned := false; !returned; {
		clk.Step(time.Second)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("AwaitLock after the holder closed = %v", err)
			}
			returned = true
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("AwaitLock did not return within 10s of the lock being freed")
			}
		}
	}
	// It let go: Open takes the lock, and the free lock is seen at once.
	closeStore(t, open(t, dir, Options{}, newClock()))
	if err := AwaitLock(stopped, dir, clk, time.Second); err != nil {
		t.Errorf("AwaitLock on a lock freed again = %v", err)
	}
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
