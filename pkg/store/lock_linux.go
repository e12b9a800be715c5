package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// lockName is the lock file in the state dir. It is never removed: removing
// it would let a second process lock a new inode while the first still
// holds the old one.
const lockName = "lock"

// lockDir takes an exclusive, non-blocking flock on dir/lock. The kernel
// drops it when the process dies, so a crash never leaves the folder
// locked. The holder's pid is written into the file for the error message
// a second agent prints.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	if err := flock(f); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &lockedError{dir: dir, pid: holderPID(path)}
		}
		return nil, fmt.Errorf("store: lock state dir %s: %w", dir, err)
	}
	// The pid is informational; failing to write it does not matter.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
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

// holderPID reads the pid the holder wrote, or "" when there is none.
func holderPID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 32 {
		return ""
	}
	pid := string(bytes.TrimSpace(b))
	if _, err := strconv.Atoi(pid); err != nil {
		return ""
	}
	return pid
}
