//go:build !linux

package file

import "os"

// Unlinked reports whether path is an inode with no name left on its
// filesystem (a hostPath mount of a deleted directory). Off Linux the link
// count is not read: it reports false, or the error of stat'ing path.
func Unlinked(path string) (bool, error) {
	if _, err := os.Stat(path); err != nil {
		return false, err
	}
	return false, nil
}
