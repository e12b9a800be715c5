package file

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// Unlinked reports whether path (symlinks followed) is an inode that no
// longer has a name on its filesystem: link count 0. That happens to the
// mount point of a hostPath volume whose directory (or file) was deleted, or
// replaced by a rename, on the host: the bind mount keeps the old inode, so
// inside the pod the path stays empty (or stale) for good and no watch
// event ever brings the new one. Only a fresh mount, that is a restarted
// pod, sees the host's path again.
//
// A path that does not exist is an error (wrapping fs.ErrNotExist), not
// unlinked: outside a mount a deleted path is simply missing, which the
// source reports as Snapshot.PathErr.
func Unlinked(path string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return st.Nlink == 0, nil
}
