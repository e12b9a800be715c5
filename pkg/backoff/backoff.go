package backoff

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Defaults match the kubelet's file source (pkg/kubelet/config/file_linux.go).
const (
	DefaultInitial = 1 * time.Second
	DefaultMax     = 20 * time.Second
)

type entry struct {
	delay      time.Duration
	lastUpdate time.Time
}

// Backoff tracks one exponential delay per ID.
type Backoff struct {
	clock   clock.PassiveClock
	initial time.Duration
	max     time.Duration

	mu      sync.Mutex
	entries map[string]*entry
}

// New returns a Backoff whose delays start at initial and double up to max.
// Non-positive values take DefaultInitial and DefaultMax; max is raised to
// initial when smaller.
func New(clk clock.PassiveClock, initial, max time.Duration) *Backoff {
	if initial <= 0 {
		initial = DefaultInitial
	}
	if max <= 0 {
		max = DefaultMax
	}
	if max < initial {
		max = initial
	}
	return &Backoff{clock: clk, initial: initial, max: max, entries: map[string]*entry{}}
}

// expired reports whether an entry has been idle long enough (2 × max) that
// its history no longer counts.
func (b *Backoff) expired(e *entry, now time.Time) bool {
	return now.Sub(e.lastUpdate) > 2*b.max
}

// Next records a failure of id now and returns how long to wait before the
// next attempt.
func (b *Backoff) Next(id string) time.Duration {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	switch {
	case !ok || b.expired(e, now):
		e = &entry{delay: b.initial}
		b.entries[id] = e
	default:
		e.delay = min(e.delay*2, b.max)
	}
	e.lastUpdate = now
	return e.delay
}

// Get returns the delay id currently waits after its last failure, or 0 when
// it has none (never failed, reset, or forgotten after 2 × max).
func (b *Backoff) Get(id string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, _ := b.live(id, b.clock.Now())
	if e == nil {
		return 0
	}
	return e.delay
}

// live returns id's entry unless it is absent or forgotten, and now.
// The caller holds b.mu.
func (b *Backoff) live(id string, now time.Time) (*entry, time.Time) {
	e, ok := b.entries[id]
	if !ok || b.expired(e, now) {
		return nil, now
	}
	return e, now
}

// Remaining returns how much of id's current delay is still to run, 0 when
// an attempt may be made now.
func (b *Backoff) Remaining(id string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, now := b.live(id, b.clock.Now())
	if e == nil {
		return 0
	}
	if left := e.lastUpdate.Add(e.delay).Sub(now); left > 0 {
		return left
	}
	return 0
}

// Reset forgets id, so its next failure waits Initial again. Call it after a
// success.
func (b *Backoff) Reset(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, id)
}

// GC drops every entry idle for more than 2 × max; it bounds memory when IDs
// are many and short-lived (one per event key, say).
func (b *Backoff) GC() {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, e := range b.entries {
		if b.expired(e, now) {
			delete(b.entries, id)
		}
	}
}

// Len returns how many IDs are tracked.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}
