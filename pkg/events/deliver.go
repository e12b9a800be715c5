package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Run delivers queued writes to the delivered sinks, one goroutine per sink
// so a slow API never holds up the local store, until ctx ends. It returns
// nil then; writes still queued stay queued for Flush. Only one Run may go
// at a time.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer r.running.Store(false)
	var wg sync.WaitGroup
	for _, s := range r.delivered {
		wg.Go(func() {
			r.work(ctx, s)
			r.logUnloggedDrops(s)
		})
	}
	wg.Wait()
	return nil
}

// job is one write taken off a sink's queue.
type job struct {
	sl     *slot
	ev     *v1.Event
	update bool
}

func (r *Recorder) work(ctx context.Context, s *deliveredSink) {
	var t alarm
	defer t.stop()
	for ctx.Err() == nil {
		s.busy.Lock()
		jobs, until := r.take(s, true)
		if len(jobs) > 0 {
			r.attempt(ctx, s, jobs)
			s.busy.Unlock()
			continue
		}
		s.busy.Unlock()
		if until.IsZero() {
			// Idle: forget the backoff of Events dropped while failing.
			s.backoff.GC()
		}
		if !r.sleep(ctx, s, &t, until, s.wake) {
			return
		}
	}
}

// alarm is a delivery goroutine's timer. It survives wake-ups that leave the
// next write's time unchanged, so a burst of Records costs no timers.
type alarm struct {
	t  clock.Timer
	at time.Time
}

func (a *alarm) stop() {
	if a.t != nil {
		a.t.Stop()
		a.t = nil
	}
}

// sleep blocks until until (zero: no timer), a wake-up, or the end of ctx;
// it reports false for the latter.
func (r *Recorder) sleep(ctx context.Context, s *deliveredSink, a *alarm, until time.Time, wake <-chan struct{}) bool {
	var tc <-chan time.Time
	var wait time.Duration
	if !until.IsZero() {
		wait = max(until.Sub(r.clk.Now()), time.Nanosecond)
		if a.t == nil || !a.at.Equal(until) {
			a.stop()
			a.t, a.at = r.clk.NewTimer(wait), until
		}
		tc = a.t.C()
	}
	if r.waiting != nil {
		r.waiting(s.name, wait)
	}
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-tc:
		a.t = nil
	}
	return true
}

// take removes the writes that may start now from s's queue: one, or up to
// maxBatch for a BatchSink. With limits it takes ready writes and honours
// the token bucket; Flush passes false and takes the longest-queued writes
// regardless of their KeyInterval or retry backoff. Both honour the sink's
// own backoff. When nothing may start, take returns when something may
// (zero: nothing queued).
func (r *Recorder) take(s *deliveredSink, limits bool) ([]*job, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 1
	if s.batch != nil {
		n = maxBatch
	}
	now := r.clk.Now()
	var jobs []*job
	for len(jobs) < n {
		j, until := r.takeOne(s, limits, now)
		if j == nil {
			return jobs, until
		}
		jobs = append(jobs, j)
	}
	return jobs, time.Time{}
}

// takeOne is take for one write; r.mu is held.
func (r *Recorder) takeOne(s *deliveredSink, limits bool, now time.Time) (*job, time.Time) {
	sl := s.q.next()
	if !limits {
		sl = s.q.oldest
	}
	if sl == nil {
		return nil, time.Time{}
	}
	wait := s.backoff.Remaining(sinkBackoffID)
	if limits {
		wait = max(wait, sl.readyAt.Sub(now), tokenWait(s.limiter, now))
	}
	if wait > 0 {
		return nil, now.Add(wait)
	}
	s.q.remove(sl)
	sl.queued = false
	sl.inflight = true
	sl.lastAttempt = now
	s.inflight++
	if limits {
		s.limiter.AllowN(now, 1) // there is a token: tokenWait was 0 at now, under r.mu
	}
	return &job{sl: sl, ev: sl.e.event(r.opts.Host), update: sl.acked > 0}, time.Time{}
}

// attempt writes jobs (one Write, or one WriteBatch) and settles each
// job's outcome; a batch succeeds or fails as a whole.
func (r *Recorder) attempt(ctx context.Context, s *deliveredSink, jobs []*job) {
	wctx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout)
	var err error
	if s.batch != nil && len(jobs) > 1 {
		writes := make([]Write, len(jobs))
		for i, j := range jobs {
			writes[i] = Write{Event: j.ev, Update: j.update}
		}
		err = s.batch.WriteBatch(wctx, writes)
	} else {
		err = s.sink.Write(wctx, jobs[0].ev, jobs[0].update)
	}
	cancel()
	switch {
	case err == nil:
		s.backoff.Reset(sinkBackoffID)
	case errors.Is(err, ErrPermanent), ctx.Err() != nil:
		// Permanent: nothing to back off from. Shutting down, not failing:
		// requeue for Flush without backoff.
	default:
		s.backoff.Next(sinkBackoffID)
	}
	for _, j := range jobs {
		r.settle(ctx, s, j, err)
	}
}

// settle records the outcome err of one job's write.
func (r *Recorder) settle(ctx context.Context, s *deliveredSink, j *job, err error) {
	name := j.sl.e.name
	switch {
	case err == nil, errors.Is(err, ErrPermanent):
		s.backoff.Reset(name)
	case ctx.Err() != nil:
	default:
		s.backoff.Next(name)
	}
	retryIn := s.backoff.Get(name)

	r.mu.Lock()
	defer r.mu.Unlock()
	sl := j.sl
	sl.inflight = false
	s.inflight--
	now := r.clk.Now()
	switch {
	case err == nil:
		sl.acked = j.ev.Count
		s.stats.Written++
		return
	case errors.Is(err, ErrPermanent):
		s.stats.failed(err)
		r.logDrop(s, sl, "permanent", &s.stats.Dropped.Permanent, now, err)
		return
	}
	if ctx.Err() == nil {
		s.stats.failed(err)
		r.log.Debug("event write failed; will retry", "sink", s.name, "event", name,
			"count", j.ev.Count, "retryIn", retryIn, "err", err)
	}
	r.requeue(s, sl, now.Add(retryIn), now)
}

// requeue queues sl's write again, to start no earlier than at, after an
// attempt that did not deliver it; r.mu is held.
func (r *Recorder) requeue(s *deliveredSink, sl *slot, at, now time.Time) {
	if sl.queued {
		// Newer occurrences queued another write; it carries this one's count.
		s.stats.Coalesced++
		s.q.delay(sl, at)
		return
	}
	sl.queued = true
	sl.readyAt = at
	s.q.pushOldest(sl)
	if s.q.len() > s.pendingMax {
		old := s.q.oldest
		s.q.remove(old)
		old.queued = false
		r.logDrop(s, old, "pending-full", &s.stats.Dropped.PendingFull, now, nil)
	}
}

// Flush delivers every queued write, ignoring KeyInterval and the token
// bucket but retrying failures with backoff, until the queues are empty or
// ctx ends. Call it on shutdown, after Run returned, with a deadline: writes
// still queued when ctx ends are dropped, counted as Drops.Shutdown and
// logged, and the error says how many.
func (r *Recorder) Flush(ctx context.Context) error {
	errs := make([]error, len(r.delivered))
	var wg sync.WaitGroup
	for i, s := range r.delivered {
		wg.Go(func() {
			errs[i] = r.drain(ctx, s)
			r.logUnloggedDrops(s)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Recorder) drain(ctx context.Context, s *deliveredSink) error {
	var t alarm
	defer t.stop()
	for ctx.Err() == nil {
		s.busy.Lock()
		jobs, until := r.take(s, false)
		if len(jobs) > 0 {
			r.attempt(ctx, s, jobs)
		}
		s.busy.Unlock()
		if len(jobs) == 0 && until.IsZero() {
			return nil
		}
		if len(jobs) == 0 && !r.sleep(ctx, s, &t, until, nil) {
			break
		}
	}
	s.busy.Lock()
	defer s.busy.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := s.q.len()
	if n == 0 {
		return nil
	}
	for sl := s.q.oldest; sl != nil; sl = s.q.oldest {
		s.q.remove(sl)
		sl.queued = false
		s.stats.Dropped.Shutdown++
	}
	r.log.Warn("event writes dropped at shutdown", "sink", s.name, "dropped", n, "err", ctx.Err())
	return fmt.Errorf("events: flush %s: %d writes not delivered: %w", s.name, n, ctx.Err())
}
