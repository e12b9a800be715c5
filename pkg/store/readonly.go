package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"k8s.io/utils/clock"
)

// OpenReadOnly opens the event store in a dir that can be read but not
// written, such as a file system the kernel remounted read-only after a
// disk error: it takes dir's lock through a read-only descriptor, so a
// second podwatch stays out all the same, and loads the Events of the log
// without changing a byte. The Store it returns lists them, and holds the
// lock until Close; every write fails with ErrReadOnly.
//
// What does not verify in the log is skipped, as ReadEvents does; a dir
// without a log is an empty store. The errors are Open's: a *LockedError
// when another process holds dir, else the OS error naming dir (a dir
// without a lock file was never opened for writing, and there is nothing
// to read in it). clk defaults to the real clock and log to a discarding
// logger.
func OpenReadOnly(dir string, opts Options, clk clock.PassiveClock, log *slog.Logger) (*Store, error) {
	clk, log, err := openArgs(dir, opts, clk, log)
	if err != nil {
		return nil, err
	}
	lock, err := lockDirReadOnly(dir)
	if err != nil {
		return nil, err
	}
	s := newStore(dir, opts, clk, log, lock)
	s.readOnly = true
	f, err := openRegular(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	r, err := scanLog(f)
	if err != nil {
		_ = f.Close()
		_ = lock.Close()
		return nil, fmt.Errorf("store: %s: %w", s.path, err)
	}
	if r.bad >= 0 {
		log.Warn("event log has a record that does not verify; read-only, so it is skipped and left as it is",
			"path", s.path, "offset", r.bad, "reason", r.badWhy)
	}
	// f stays open to read the Events back from; Close closes it.
	s.f, s.live, s.liveBytes, s.size = f, r.live, r.liveBytes, r.good
	return s, nil
}

// ReadOnly reports whether s was opened by OpenReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }
