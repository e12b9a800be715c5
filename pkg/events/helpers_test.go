package events

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// write is one call a fakeSink received.
type write struct {
	ev     *v1.Event
	update bool
}

// fakeSink records writes; writeFn, when set, runs first and decides the
// result (it may block, or signal the test).
type fakeSink struct {
	mu      sync.Mutex
	writes  []write
	writeFn func(ctx context.Context, ev *v1.Event, update bool) error
}

func (s *fakeSink) Write(ctx context.Context, ev *v1.Event, update bool) error {
	if s.writeFn != nil {
		if err := s.writeFn(ctx, ev, update); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, write{ev: ev, update: update})
	return nil
}

func (s *fakeSink) got() []write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]write(nil), s.writes...)
}

// last returns the last successful write of the Event named name.
func (s *fakeSink) last(name string) (write, bool) {
	ws := s.got()
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].ev.Name == name {
			return ws[i], true
		}
	}
	return write{}, false
}

// signalSink is a fakeSink whose successful writes are also sent to ch.
func signalSink() (*fakeSink, chan write) {
	ch := make(chan write, 1024)
	s := &fakeSink{}
	s.writeFn = func(_ context.Context, ev *v1.Event, update bool) error {
		ch <- write{ev: ev, update: update}
		return nil
	}
	return s, ch
}

func occ(reason, msg string) Occurrence {
	return Occurrence{Object: NodeRef("node-1"), Type: "Warning", Reason: reason, Message: msg}
}

func newTest(t *testing.T, opts Options, regs []Registration, restore []v1.Event) (*Recorder, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	if opts.Host == "" {
		opts.Host = "node-1"
	}
	r, err := New(opts, clk, nil, regs, restore)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

func mustRecord(t *testing.T, r *Recorder, o Occurrence) {
	t.Helper()
	if err := r.Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// running is a Recorder's Run in a goroutine, with the delivery
// goroutines' waits reported on waits.
type running struct {
	waits chan armed
	stop  func()
}

// armed is one wait of a delivery goroutine, and the (fake) time it began.
type armed struct {
	d  time.Duration
	at time.Time
}

// startRun starts r.Run; the test must call stop (Cleanup does too).
func startRun(t *testing.T, r *Recorder) *running {
	t.Helper()
	waits := make(chan armed, 4096)
	r.waiting = func(_ string, d time.Duration) { waits <- armed{d, r.clk.Now()} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &running{waits: waits, stop: stop}
}

// awaitWait returns once a delivery goroutine blocks with a wait that ok
// accepts. Blocking is what makes a fake-clock step safe: the timer exists.
func (rn *running) awaitWait(t *testing.T, ok func(time.Duration) bool) time.Duration {
	t.Helper()
	return rn.awaitWaitFrom(t, time.Time{}, ok)
}

// awaitWaitFrom is awaitWait for waits that began at or after from: a
// goroutine woken before a clock step may have reported the same wait
// twice, and stepping again on the stale report would race its new timer.
func (rn *running) awaitWaitFrom(t *testing.T, from time.Time, ok func(time.Duration) bool) time.Duration {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case w := <-rn.waits:
			if !w.at.Before(from) && ok(w.d) {
				return w.d
			}
		case <-deadline:
			t.Fatal("delivery goroutine never waited as expected")
		}
	}
}

func awaitWrite(t *testing.T, ch <-chan write) write {
	t.Helper()
	select {
	case w := <-ch:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("no write within 10s")
	}
	return write{}
}

func idle(d time.Duration) bool { return d == 0 }

// sinkStats returns the stats of the sink named name.
func sinkStats(t *testing.T, r *Recorder, name string) SinkStats {
	t.Helper()
	for _, s := range r.Stats().Sinks {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no sink %q", name)
	return SinkStats{}
}

// checkBalance asserts that every recorded occurrence is accounted for at
// a delivered sink.
func checkBalance(t *testing.T, r *Recorder, name string) {
	t.Helper()
	st := r.Stats()
	s := sinkStats(t, r, name)
	if got := s.Written + s.Coalesced + s.Dropped.Total() + uint64(s.Pending); got != st.Recorded {
		t.Fatalf("%s: written %d + coalesced %d + dropped %d + pending %d = %d, want recorded %d",
			name, s.Written, s.Coalesced, s.Dropped.Total(), s.Pending, got, st.Recorded)
	}
}
