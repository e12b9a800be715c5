package store

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync makes f's data durable. It skips the inode times fsync would
// also write, which nobody reads back; the file size, which a reader needs,
// is still flushed.
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// syncDir makes a rename or create in dir durable: without it a crash can
// bring back the old name after the new file's data is safe.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
