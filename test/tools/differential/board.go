package differential

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// board guards what one side has observed and wakes waiters on every
// change, so that every wait in the harness is for a condition, with a
// deadline, and none is a sleep.
type board struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
}

func newBoard() *board { return &board{changed: make(chan struct{})} }

// update runs f under the lock and wakes the waiters.
func (b *board) update(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
	close(b.changed)
	b.changed = make(chan struct{})
}

// read runs f under the lock.
func (b *board) read(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
}

// await returns once cond, run under the lock, holds; or an error naming
// what at the deadline. state, also run under the lock, describes what was
// seen for the error.
func (b *board) await(ctx context.Context, timeout time.Duration, what string, cond func() bool, state func() string) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		b.mu.Lock()
		ok, ch := cond(), b.changed
		b.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			var seen string
			b.read(func() { seen = state() })
			return fmt.Errorf("%s: not within %v; seen: %s", what, timeout, seen)
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
	}
}
