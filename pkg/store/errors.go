package store

import (
	"errors"
	"fmt"
)

// Sentinels, for errors.Is.
var (
	// ErrLocked: another process holds the state dir's lock.
	ErrLocked = errors.New("store: state dir is locked by another podwatch")
	// ErrCorrupt: a file in the state dir could not be read back as
	// written. The file has been set aside (see CorruptError) and is no
	// longer used.
	ErrCorrupt = errors.New("store: corrupt file")
	// ErrClosed: the Store was used after Close.
	ErrClosed = errors.New("store: closed")
	// ErrReadOnly: a write to a Store that OpenReadOnly opened.
	ErrReadOnly = errors.New("store: opened read-only")
)

// LockedError names the folder another process holds and, as far as its
// lock file tells, that process. It matches ErrLocked.
type LockedError struct {
	Dir    string
	Holder Holder // what the lock file says; zero when it says nothing
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("store: state dir %s is locked by another podwatch", e.Dir)
	if h := e.Holder.String(); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// CorruptError describes a corrupt file that was moved out of the way. It
// matches ErrCorrupt. When Open returns one, the Store it returns alongside
// is usable: it holds every Event that could still be verified (Kept).
type CorruptError struct {
	Path     string // the file as it was named
	SetAside string // where it is now; empty if it could not be moved
	Offset   int64  // byte offset of the first bad record in an event log, else -1
	Reason   string // what was wrong first
	Kept     int    // Events recovered from an event log
}

func (e *CorruptError) Error() string {
	where := ""
	if e.Offset >= 0 {
		where = fmt.Sprintf(" at byte %d", e.Offset)
	}
	aside := "could not be set aside"
	if e.SetAside != "" {
		aside = "set aside as " + e.SetAside
	}
	msg := fmt.Sprintf("store: %s is corrupt%s (%s); %s", e.Path, where, e.Reason, aside)
	if e.Offset >= 0 {
		msg += fmt.Sprintf("; started a fresh log, events kept: %d", e.Kept)
	}
	return msg
}

func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
