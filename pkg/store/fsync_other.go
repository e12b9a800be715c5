//go:build !linux

package store

import "os"

// fdatasync falls back to a full fsync where fdatasync is not portable.
func fdatasync(f *os.File) error { return f.Sync() }

// syncDir is best effort off Linux: some systems cannot fsync a folder,
// and podwatch only runs in production on Linux.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	_ = d.Sync()
	return d.Close()
}
