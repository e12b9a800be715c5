package published

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/store"
)

// Version is the format of the published state's files, written in each
// as "version" (absent: a file from before it was). A podwatch reads its
// own format and older ones as they are. A newer podwatch's file (after a
// downgrade) is read as far as this one understands it, which it says; one
// it cannot read stops it (ErrNewer) rather than announce every pod again.
const Version = 1

// ErrNewer: a state file written by a newer podwatch cannot be read.
var ErrNewer = errors.New("published: state written by a newer podwatch cannot be read")

// NewerError names the state file a newer podwatch wrote that this one
// cannot read. It matches ErrNewer.
type NewerError struct {
	Path    string
	Version int // the file's format
	Err     error
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("published: %s was written by a newer podwatch (state format %d; this one reads up to %d) and cannot be read: %v; "+
		"podwatch stops rather than announce every static pod again: run the newer podwatch, or move the state dir's state.json and pods-*.json aside to start afresh",
		e.Path, e.Version, Version, e.Err)
}

func (e *NewerError) Unwrap() error        { return e.Err }
func (e *NewerError) Is(target error) bool { return target == ErrNewer }

// stateFile is the content of state.json and of each pod shard.
type stateFile struct {
	Version int `json:"version"`
	diff.State
}

// load reads dir/name into v: as store.LoadJSON does (a file that cannot
// be decoded is set aside) unless a newer podwatch wrote it. Such a file
// is left where it is: read with a warning when it decodes, a *NewerError
// when not.
func load(dir, name string, v *stateFile, log *slog.Logger) error {
	var probe struct {
		Version int `json:"version"`
	}
	if err := store.ReadJSON(dir, name, &probe); err != nil || probe.Version <= Version {
		return store.LoadJSON(dir, name, v)
	}
	path := filepath.Join(dir, name)
	if err := store.ReadJSON(dir, name, v); err != nil {
		return &NewerError{Path: path, Version: probe.Version, Err: err}
	}
	log.Warn("the published state was written by a newer podwatch: read as far as this one understands it; what only the newer one keeps there is lost at the next save",
		"file", path, "version", probe.Version, "understood", Version)
	return nil
}
