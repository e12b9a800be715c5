package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/utils/clock"
)

// lockDir takes an exclusive, non-blocking flock on dir/lock. The kernel
// drops it when the process dies, so a crash never leaves the folder
// locked. h is written into the file for the error a second agent gets.
func lockDir(dir string, h Holder) (*os.File, error) {
	f, err := os.OpenFile(lockPath(dir), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	if err := takeLock(f, dir); err != nil {
		return nil, err
	}
	// The holder is informational; failing to write it does not matter.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(encodeHolder(h), 0)
	}
	return f, nil
}

// lockDirReadOnly takes the same lock through a read-only descriptor:
// flock needs no write access, so a state dir that can only be read still
// keeps a second podwatch out. It writes nothing, so the file goes on
// naming the last holder that could write it.
func lockDirReadOnly(dir string) (*os.File, error) {
	f, err := openRegular(lockPath(dir))
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	if err := takeLock(f, dir); err != nil {
		return nil, err
	}
	return f, nil
}

// takeLock flocks f, closing it on failure.
func takeLock(f *os.File, dir string) error {
	err := flock(f)
	if err == nil {
		return nil
	}
	_ = f.Close()
	if errors.Is(err, unix.EWOULDBLOCK) {
		h, _ := readHolder(dir)
		return &LockedError{Dir: dir, Holder: h}
	}
	return fmt.Errorf("store: lock state dir %s: %w", dir, err)
}

func flock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// AwaitLock returns nil once nobody holds dir's lock, trying every period
// of clk; or ctx's error when ctx ends first. It does not keep the lock: a
// second descriptor of this process would conflict with it, so the caller
// takes it with Open or OpenReadOnly, and waits again should another
// process have taken it in between. A lock file it cannot open counts as
// held: the caller found it locked, so it exists.
func AwaitLock(ctx context.Context, dir string, clk clock.WithTicker, period time.Duration) error {
	t := clk.NewTicker(period)
	defer t.Stop()
	for {
		if lockFree(dir) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
		}
	}
}

// lockFree tries dir's lock once and lets go of it at once.
func lockFree(dir string) bool {
	f, err := os.Open(lockPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close() // closing the only descriptor releases the flock
	return flock(f) == nil
}
