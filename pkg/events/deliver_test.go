package events

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestRepeatsBetweenWritesCoalesce(t *testing.T) {
	api, writes := signalSink()
	r, clk := newTest(t, Options{KeyInterval: 10 * time.Second}, []Registration{DeliverTo("api", api)}, nil)
	rn := startRun(t, r)
	o := occ("WatchDegraded", "inotify limit reached")

	mustRecord(t, r, o)
	if w := awaitWrite(t, writes); w.ev.Count != 1 || w.update {
		t.Fatalf("first write x%d update=%v, want a create x1", w.ev.Count, w.update)
	}
	rn.awaitWait(t, idle)
	for range 10_000 {
		mustRecord(t, r, o)
	}
	if d := rn.awaitWait(t, func(d time.Duration) bool { return d > 0 }); d != 10*time.Second {
		t.Fatalf("next write waits %v, want the 10s key interval", d)
	}
	clk.Step(10 * time.Second)
	w := awaitWrite(t, writes)
	if w.ev.Count != 10_001 || !w.update {
		t.Fatalf("coalesced write x%d update=%v, want an update x10001", w.ev.Count, w.update)
	}
	rn.awaitWait(t, idle)
	rn.stop()
	if n := len(api.got()); n != 2 {
		t.Fatalf("%d writes for 10,001 occurrences, want 2", n)
	}
	if s := sinkStats(t, r, "api"); s.Coalesced != 9_999 || s.Written != 2 {
		t.Fatalf("stats %+v, want 2 written, 9999 coalesced", s)
	}
	checkBalance(t, r, "api")
}

func TestStormOfIdenticalEvents(t *testing.T) {
	api := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{DeliverTo("api", api)}, nil)
	rn := startRun(t, r)
	o := occ("InvalidManifest", "bad.yaml: line 3: oops")
	o.File = "bad.yaml"
	const n = 100_000
	for range n { // 1 ms apart: a 100 s storm on the fake clock
		mustRecord(t, r, o)
		clk.Step(time.Millisecond)
	}
	rn.stop()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws := api.got()
	if last := ws[len(ws)-1].ev; last.Count != n {
		t.Fatalf("final count %d, want %d", last.Count, n)
	}
	// At most one write per 10 s key interval over 100 s, plus the flush.
	if len(ws) > 11 {
		t.Fatalf("%d writes for a 100 s storm, want at most 11", len(ws))
	}
	checkBalance(t, r, "api")
}

func TestFailingSinkRecoversWithExactCounts(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	writes := make(chan write, 64)
	attempts := make(chan struct{}, 64)
	api := &fakeSink{writeFn: func(_ context.Context, ev *v1.Event, update bool) error {
		// Decided before the attempt is signalled: the test turns failing
		// off right after it sees the last failing attempt, and must not
		// turn that one into a success.
		failing := fail.Load()
		attempts <- struct{}{}
		if failing {
			return errors.New("apiserver unavailable")
		}
		writes <- write{ev: ev, update: update}
		return nil
	}}
	r, clk := newTest(t, Options{RetryInitial: time.Second, RetryMax: 8 * time.Second, RetryJitter: -1}, []Registration{DeliverTo("api", api)}, nil)
	a, b := occ("R", "a"), occ("R", "b")
	mustRecord(t, r, a)
	mustRecord(t, r, b)
	rn := startRun(t, r)
	<-attempts
	// The sink's backoff doubles while it fails, whichever Event failed;
	// occurrences meanwhile coalesce into the queued writes.
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		// A wrong schedule never matches and times out.
		rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d == want })
		mustRecord(t, r, a)
		mustRecord(t, r, b)
		clk.Step(want)
		<-attempts
	}
	if n := len(api.got()); n != 0 {
		t.Fatalf("%d writes succeeded while failing", n)
	}
	fail.Store(false)
	rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d > 0 })
	clk.Step(8 * time.Second)
	got := map[string]int32{}
	for len(got) < 2 || got[""] != 0 {
		w := awaitWrite(t, writes)
		if w.update {
			t.Fatalf("first successful write of %s is an update", w.ev.Message)
		}
		got[w.ev.Message] = w.ev.Count
	}
	if got["a"] != 6 || got["b"] != 6 {
		t.Fatalf("delivered counts a=%d b=%d, want exactly 6 and 6", got["a"], got["b"])
	}
	rn.awaitWait(t, idle)
	rn.stop()
	s := sinkStats(t, r, "api")
	if s.Written != 2 || s.Failed < 5 || s.Pending != 0 || s.Dropped.Total() != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkBalance(t, r, "api")
}

// The fleet after an API outage: the retry backoff (up to RetryMax, a
// minute, plus jitter) has grown past the key interval when the sink
// answers again; occurrences stop right then. Their count must reach the
// sink within the key interval of the last one, not a full backoff later:
// no retry wait exceeds the key interval, jitter included.
func TestRetryWaitNeverExceedsTheKeyInterval(t *testing.T) {
	const keyInterval = 10 * time.Second
	var fail atomic.Bool
	attempts := make(chan struct{}, 64)
	api, writes := signalSink()
	ok := api.writeFn
	api.writeFn = func(ctx context.Context, ev *v1.Event, update bool) error {
		failing := fail.Load()
		attempts <- struct{}{}
		if failing {
			return errors.New("apiserver unavailable")
		}
		return ok(ctx, ev, update)
	}
	// RetryMax and RetryJitter are the defaults: a minute, 20 %.
	r, clk := newTest(t, Options{KeyInterval: keyInterval}, []Registration{DeliverTo("api", api)}, nil)
	rn := startRun(t, r)
	o := occ("InvalidManifest", "bad.yaml: line 3: oops")
	o.File = "bad.yaml"
	mustRecord(t, r, o)
	<-attempts
	awaitWrite(t, writes)
	rn.awaitWait(t, idle)

	fail.Store(true)
	mustRecord(t, r, o)
	n := int32(2)
	var wait time.Duration
	// The key interval, then six failures: without a cap the backoff,
	// doubling from 1 s, is past the key interval on any jitter.
	for i := range 7 {
		wait = rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d > 0 })
		if wait > keyInterval {
			t.Errorf("after failure %d the write waits %v, want at most the key interval %v", i, wait, keyInterval)
		}
		mustRecord(t, r, o) // coalesces into the queued retry
		n++
		clk.Step(wait)
		<-attempts
	}
	// The sink answers again; the last occurrence comes now.
	fail.Store(false)
	wait = rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d > 0 })
	mustRecord(t, r, o)
	n++
	last := clk.Now()
	if wait > keyInterval {
		t.Fatalf("the last count would reach the sink %v after its occurrence, want within the key interval %v", wait, keyInterval)
	}
	clk.Step(wait)
	if w := awaitWrite(t, writes); w.ev.Count != n || !w.update {
		t.Fatalf("write after the recovery x%d update=%v, want an update x%d", w.ev.Count, w.update, n)
	}
	if late := clk.Since(last); late > keyInterval {
		t.Fatalf("count delivered %v after the last occurrence", late)
	}
	rn.awaitWait(t, idle)
	rn.stop()
	checkBalance(t, r, "api")
}

func TestPendingBoundDropsOldestAndCounts(t *testing.T) {
	api := &fakeSink{}
	r, _ := newTest(t, Options{PendingMax: 3, AggregateMax: -1}, []Registration{DeliverTo("api", api)}, nil)
	for i := range 5 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	s := sinkStats(t, r, "api")
	if s.Dropped.PendingFull != 2 || s.Pending != 3 {
		t.Fatalf("stats %+v, want 2 dropped, 3 pending", s)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, w := range api.got() {
		msgs = append(msgs, w.ev.Message)
	}
	if fmt.Sprint(msgs) != "[m2 m3 m4]" {
		t.Fatalf("delivered %v, want the newest three", msgs)
	}
	checkBalance(t, r, "api")
	// A dropped Event's next occurrence delivers its full count as a create.
	mustRecord(t, r, occ("R", "m0"))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w, _ := api.last(api.got()[3].ev.Name); w.ev.Message != "m0" || w.ev.Count != 2 || w.update {
		t.Fatalf("redelivery %+v update=%v, want m0 x2 as a create", w.ev, w.update)
	}
}

func TestPermanentErrorDropsWriteNotSink(t *testing.T) {
	api := &fakeSink{writeFn: func(_ context.Context, ev *v1.Event, _ bool) error {
		if ev.Message == "bad" {
			return fmt.Errorf("422: %w", ErrPermanent)
		}
		return nil
	}}
	r, _ := newTest(t, Options{}, []Registration{DeliverTo("api", api)}, nil)
	mustRecord(t, r, occ("R", "bad"))
	mustRecord(t, r, occ("R", "good"))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := sinkStats(t, r, "api")
	if s.Dropped.Permanent != 1 || s.Written != 1 || s.Pending != 0 {
		t.Fatalf("stats %+v, want 1 permanent drop, 1 written", s)
	}
	checkBalance(t, r, "api")
}

func TestQPSBoundsWritesAcrossEvents(t *testing.T) {
	api, writes := signalSink()
	r, clk := newTest(t, Options{QPS: 1, Burst: 2, AggregateMax: -1}, []Registration{DeliverTo("api", api)}, nil)
	for i := range 4 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	rn := startRun(t, r)
	awaitWrite(t, writes)
	awaitWrite(t, writes) // the burst
	if d := rn.awaitWait(t, func(d time.Duration) bool { return d > 0 }); d != time.Second {
		t.Fatalf("third write waits %v, want 1s at 1 QPS", d)
	}
	clk.Step(time.Second)
	awaitWrite(t, writes)
	rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d > 0 })
	clk.Step(time.Second)
	awaitWrite(t, writes)
	rn.awaitWait(t, idle)
	rn.stop()
	checkBalance(t, r, "api")
}

func TestShutdownFlushDeliversPendingWithinDeadline(t *testing.T) {
	api, writes := signalSink()
	store := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{DeliverTo("api", api), DeliverTo("store", store)}, nil)
	rn := startRun(t, r)
	o := occ("WatchDegraded", "x")
	mustRecord(t, r, o)
	awaitWrite(t, writes)
	for range 41 {
		mustRecord(t, r, o) // held back by the key interval
	}
	rn.awaitWait(t, func(d time.Duration) bool { return d > 0 })
	rn.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*fakeSink{"api": api, "store": store} {
		ws := s.got()
		if last := ws[len(ws)-1].ev; last.Count != 42 {
			t.Fatalf("%s: final count %d, want 42", name, last.Count)
		}
		checkBalance(t, r, name)
	}
}

func TestFlushGivesUpAtDeadlineAndCounts(t *testing.T) {
	api := &fakeSink{writeFn: func(ctx context.Context, _ *v1.Event, _ bool) error {
		<-ctx.Done() // a hung apiserver
		return ctx.Err()
	}}
	r, _ := newTest(t, Options{AggregateMax: -1}, []Registration{DeliverTo("api", api)}, nil)
	for i := range 3 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := r.Flush(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush = %v, want the deadline", err)
	}
	s := sinkStats(t, r, "api")
	if s.Dropped.Shutdown != 3 || s.Pending != 0 {
		t.Fatalf("stats %+v, want 3 dropped at shutdown", s)
	}
	checkBalance(t, r, "api")
}

func TestFlushRetriesFailuresWithBackoff(t *testing.T) {
	var calls atomic.Int32
	api := &fakeSink{writeFn: func(context.Context, *v1.Event, bool) error {
		if calls.Add(1) == 1 {
			return errors.New("connection refused")
		}
		return nil
	}}
	r, clk := newTest(t, Options{RetryJitter: -1}, []Registration{DeliverTo("api", api)}, nil)
	waits := make(chan time.Duration, 16)
	r.waiting = func(_ string, d time.Duration) { waits <- d }
	mustRecord(t, r, occ("R", "m"))
	done := make(chan error, 1)
	go func() { done <- r.Flush(context.Background()) }()
	if d := <-waits; d != time.Second {
		t.Fatalf("flush waits %v after a failure, want 1s", d)
	}
	clk.Step(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ws := api.got(); len(ws) != 1 || ws[0].ev.Count != 1 {
		t.Fatalf("writes %+v", ws)
	}
}

func TestRunTwiceFails(t *testing.T) {
	r, _ := newTest(t, Options{}, []Registration{DeliverTo("api", &fakeSink{})}, nil)
	rn := startRun(t, r)
	rn.awaitWait(t, idle)
	if err := r.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Run = %v, want ErrRunning", err)
	}
	rn.stop()
}

// A sink's own limits override Options: the local store takes a burst that
// the API server's limits would drop.
func TestRegistrationLimitsOverrideOptions(t *testing.T) {
	api, local := &fakeSink{}, &fakeSink{}
	r, _ := newTest(t, Options{PendingMax: 3, AggregateMax: -1}, []Registration{
		DeliverTo("api", api),
		DeliverTo("store", local).WithLimits(Limits{PendingMax: 100, QPS: 1000, Burst: 1000}),
	}, nil)
	for i := range 10 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	if s := sinkStats(t, r, "api"); s.Dropped.PendingFull != 7 {
		t.Fatalf("api stats %+v, want 7 dropped past PendingMax 3", s)
	}
	if s := sinkStats(t, r, "store"); s.Dropped.Total() != 0 || s.Pending != 10 {
		t.Fatalf("store stats %+v, want all 10 pending, none dropped", s)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(local.got()); n != 10 {
		t.Fatalf("store got %d writes, want 10", n)
	}
	checkBalance(t, r, "store")
}

// A sink's own key interval overrides Options: the local store may show a
// fresh count every second while the API gets one write a minute.
func TestRegistrationKeyIntervalOverride(t *testing.T) {
	api, local := &fakeSink{}, &fakeSink{}
	r, clk := newTest(t, Options{KeyInterval: time.Minute, AggregateMax: -1}, []Registration{
		DeliverTo("api", api),
		DeliverTo("store", local).WithLimits(Limits{KeyInterval: time.Second}),
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	mustRecord(t, r, occ("R", "m"))
	waitWrites(t, api, 1)
	waitWrites(t, local, 1)
	clk.Step(2 * time.Second)
	mustRecord(t, r, occ("R", "m"))
	clk.Step(2 * time.Second)
	waitWrites(t, local, 2)
	if n := len(api.got()); n != 1 {
		t.Fatalf("api got %d writes within its minute, want 1", n)
	}
}

// waitWrites polls until s has n writes or fails after a deadline.
func waitWrites(t *testing.T, s *fakeSink, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.got()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("sink has %d writes, want %d", len(s.got()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

type codedErr string

func (e codedErr) Error() string { return "coded " + string(e) }
func (e codedErr) Code() string  { return string(e) }

// Failures are counted by the code the sink put on them, for the metrics.
func TestFailuresCountedByCode(t *testing.T) {
	out := &fakeSink{writeFn: func(context.Context, *v1.Event, bool) error { return codedErr("429") }}
	api := &fakeSink{writeFn: func(context.Context, *v1.Event, bool) error {
		return Permanent(fmt.Errorf("wrapped: %w", codedErr("422")))
	}}
	r, _ := newTest(t, Options{AggregateMax: -1}, []Registration{StreamTo("stdout", out), DeliverTo("api", api)}, nil)
	_ = r.Record(context.Background(), occ("R", "m"))
	_ = r.Record(context.Background(), occ("R", "n"))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := sinkStats(t, r, "stdout"); s.FailedByCode["429"] != 2 || s.Failed != 2 {
		t.Fatalf("stdout stats %+v, want 2 failures coded 429", s)
	}
	if s := sinkStats(t, r, "api"); s.FailedByCode["422"] != 2 || s.Dropped.Permanent != 2 {
		t.Fatalf("api stats %+v, want 2 permanent failures coded 422", s)
	}
	if got := ErrorCode(errors.New("plain")); got != CodeUnknown {
		t.Fatalf("ErrorCode(plain) = %q", got)
	}
}

func TestRetryWaitsAreJittered(t *testing.T) {
	const n = 8
	seen := map[time.Duration]bool{}
	for range n {
		api := &fakeSink{writeFn: func(context.Context, *v1.Event, bool) error { return errors.New("apiserver unavailable") }}
		r, _ := newTest(t, Options{RetryInitial: time.Second}, []Registration{DeliverTo("api", api)}, nil)
		mustRecord(t, r, occ("R", "m"))
		rn := startRun(t, r)
		d := rn.awaitWait(t, func(d time.Duration) bool { return d > 0 })
		rn.stop()
		if d < time.Second || d >= 1200*time.Millisecond {
			t.Fatalf("first retry waits %v, want 1s plus up to 20%%", d)
		}
		seen[d] = true
	}
	if len(seen) < n/2 {
		t.Errorf("%d recorders drew only %d distinct waits: not jittered", n, len(seen))
	}
}
