//go:build !linux

package store

import (
	"fmt"
	"os"
	"path/filepath"
)

const lockName = "lock"

// lockDir only opens the lock file off Linux: podwatch runs on Linux nodes,
// and other builds exist for development, where a single writer is up to
// the developer.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	return f, nil
}
