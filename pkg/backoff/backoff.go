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
	delay      time.Duration // the exponential step
	wait       time.Duration // delay plus its jitter: what the caller waits
	lastUpdate time.Time
}

// Backoff tracks one exponential delay per ID.
type Backoff struct {
	clock   clock.PassiveClock
	initial time.Duration
	max     time.Duration

	// jitter, when set, lengthens each wait by up to factor × delay, drawn
	// from rnd in [0, 1): agents that failed together do not all retry
	// together.
	factor float64
	rnd    func() float64

	mu      sync.Mutex
	entries map[string]*entry
}

// WithJitter makes every wait delay × (1 + factor × rnd()), rnd returning
// values in [0, 1), and returns b. Call it before b is used. The kubelet's
// file source has no jitter; the agents of a fleet retrying one API server
// want some.
func (b *Backoff) WithJitter(factor float64, rnd func() float64) *Backoff {
	if factor > 0 && rnd != nil {
		b.factor, b.rnd = factor, rnd
	}
	return b
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
// next attempt: the delay, with its jitter when set.
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
	e.wait = e.delay
	if b.rnd != nil {
		e.wait += time.Duration(b.factor * b.rnd() * float64(e.delay))
	}
	e.lastUpdate = now
	return e.wait
}

// Get returns the wait id has after its last failure (the delay, with its
// jitter when set), or 0 when it has none (never failed, reset, or
// forgotten after 2 × max).
func (b *Backoff) Get(id string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, _ := b.live(id, b.clock.Now())
	if e == nil {
		return 0
	}
	return e.wait
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
	if left := e.lastUpdate.Add(e.wait).Sub(now); left > 0 {
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
