//go:build !linux

package store

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/utils/clock"
)

// lockDir only opens the lock file off Linux: podwatch runs on Linux nodes,
// and other builds exist for development, where a single writer is up to
// the developer.
func lockDir(dir string, h Holder) (*os.File, error) {
	f, err := os.OpenFile(lockPath(dir), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(encodeHolder(h), 0)
	}
	return f, nil
}

func lockDirReadOnly(dir string) (*os.File, error) {
	f, err := openRegular(lockPath(dir))
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	return f, nil
}

// AwaitLock returns at once off Linux, where nothing is locked.
func AwaitLock(ctx context.Context, _ string, _ clock.WithTicker, _ time.Duration) error {
	return ctx.Err()
}
