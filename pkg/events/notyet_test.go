package events

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// A sink that answers NotYet for one Event gets it again after the delay it
// gave, with no backoff and no failure counted, while the other Events go
// on being written; the final Flush is never held back.
func TestNotYetHoldsOneEventBackNotTheSink(t *testing.T) {
	var holds atomic.Int32
	holds.Store(2)
	writes := make(chan write, 64)
	api := &fakeSink{writeFn: func(ctx context.Context, ev *v1.Event, update bool) error {
		if ev.Reason == "Held" && !Final(ctx) && holds.Add(-1) >= 0 {
			return NotYet(5*time.Second, "its pod is not there yet")
		}
		writes <- write{ev: ev, update: update}
		return nil
	}}
	r, clk := newTest(t, Options{RetryInitial: time.Minute, RetryMax: time.Minute, RetryJitter: -1}, []Registration{DeliverTo("api", api)}, nil)
	rn := startRun(t, r)
	mustRecord(t, r, occ("Held", "h"))
	// Held back: the delivery goroutine waits the sink's delay, not a
	// retry backoff (a minute).
	rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d == 5*time.Second })
	mustRecord(t, r, occ("Other", "o"))
	if w := awaitWrite(t, writes); w.ev.Reason != "Other" {
		t.Fatalf("first write %s, want Other while Held waits", w.ev.Reason)
	}
	mustRecord(t, r, occ("Held", "h")) // folds into the held write
	for range 2 {
		rn.awaitWaitFrom(t, clk.Now(), func(d time.Duration) bool { return d == 5*time.Second })
		clk.Step(5 * time.Second)
	}
	w := awaitWrite(t, writes)
	if w.ev.Reason != "Held" || w.ev.Count != 2 || w.update {
		t.Fatalf("held write %s x%d update=%v, want the create of Held x2", w.ev.Reason, w.ev.Count, w.update)
	}
	rn.awaitWait(t, idle)
	rn.stop()
	s := sinkStats(t, r, "api")
	if s.Failed != 0 || s.Deferred != 2 || s.Written != 2 || s.Dropped.Total() != 0 {
		t.Fatalf("stats %+v: want 2 deferred, none failed", s)
	}
	checkBalance(t, r, "api")
}

// Flush's writes are final: a sink must not hold them back, and Final
// tells it so.
func TestFlushWritesAreFinal(t *testing.T) {
	var final atomic.Bool
	api := &fakeSink{writeFn: func(ctx context.Context, _ *v1.Event, _ bool) error {
		final.Store(Final(ctx))
		return nil
	}}
	r, _ := newTest(t, Options{}, []Registration{DeliverTo("api", api)}, nil)
	mustRecord(t, r, occ("Held", "h"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !final.Load() {
		t.Fatal("Flush's write was not marked Final")
	}
	if Final(context.Background()) {
		t.Fatal("a plain context is Final")
	}
}
