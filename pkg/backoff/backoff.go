package backoff

import (
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Defaults match the kubelet's file source (pkg/kubelet/config/file_linux.go).
const (
	DefaultInitial = 1 * time.Second
	DefaultMax     = 20 * time.Second
)

// failure is the last failure of an ID.
type failure struct {
	at   time.Time
	wait time.Duration // the delay plus its jitter: what the caller waits
}

// Backoff tracks one exponential delay per ID.
type Backoff struct {
	clock clock.PassiveClock
	max   time.Duration
	// steps holds each ID's delay: Initial, doubled per failure up to Max.
	steps *flowcontrol.Backoff

	// jitter, when set, lengthens each wait by up to factor × delay, drawn
	// from rnd in [0, 1): agents that failed together do not all retry
	// together.
	factor float64
	rnd    func() float64

	mu sync.Mutex
	// last is each ID's last failure, whose time flowcontrol keeps but does not expose.
	last map[string]failure
}

// passiveClock gives flowcontrol.Backoff, which reads only Now and Since,
// the clock.Clock it asks for; the nil Clock's timers are never called.
type passiveClock struct {
	clock.Clock
	now clock.PassiveClock
}

func (c passiveClock) Now() time.Time                  { return c.now.Now() }
func (c passiveClock) Since(t time.Time) time.Duration { return c.now.Since(t) }

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
	steps := flowcontrol.NewBackOff(initial, max)
	steps.Clock = passiveClock{now: clk}
	return &Backoff{clock: clk, max: max, steps: steps, last: map[string]failure{}}
}

// expired reports whether a failure is old enough (2 × max) that it no
// longer counts: flowcontrol's rule.
func (b *Backoff) expired(f failure, now time.Time) bool {
	return now.Sub(f.at) > 2*b.max
}

// Next records a failure of id now and returns how long to wait before the
// next attempt: the delay, with its jitter when set.
func (b *Backoff) Next(id string) time.Duration {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.live(id, now); !ok {
		// flowcontrol stamps a later clock reading; forgetting by ours keeps Next in step with Get.
		b.steps.Reset(id)
	}
	b.steps.Next(id, now)
	delay := b.steps.Get(id)
	wait := delay
	if b.rnd != nil {
		// Not flowcontrol's jitter: it compounds, is capped at max and cannot take rnd.
		wait += time.Duration(b.factor * b.rnd() * float64(delay))
	}
	b.last[id] = failure{at: now, wait: wait}
	return wait
}

// Get returns the wait id has after its last failure (the delay, with its
// jitter when set), or 0 when it has none (never failed, reset, or
// forgotten after 2 × max).
func (b *Backoff) Get(id string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, _ := b.live(id, b.clock.Now())
	return f.wait
}

// live returns id's last failure unless there is none or it is forgotten.
// The caller holds b.mu.
func (b *Backoff) live(id string, now time.Time) (failure, bool) {
	f, ok := b.last[id]
	if !ok || b.expired(f, now) {
		return failure{}, false
	}
	return f, true
}

// Remaining returns how much of id's current delay is still to run, 0 when
// an attempt may be made now.
func (b *Backoff) Remaining(id string) time.Duration {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.live(id, now)
	if !ok {
		return 0
	}
	return max(f.at.Add(f.wait).Sub(now), 0)
}

// Reset forgets id, so its next failure waits Initial again. Call it after a
// success.
func (b *Backoff) Reset(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.last, id)
	b.steps.Reset(id)
}

// GC drops every entry idle for more than 2 × max; it bounds memory when IDs
// are many and short-lived (one per event key, say).
func (b *Backoff) GC() {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, f := range b.last {
		if b.expired(f, now) {
			delete(b.last, id)
			b.steps.Reset(id)
		}
	}
}

// Len returns how many IDs are tracked.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.last)
}
