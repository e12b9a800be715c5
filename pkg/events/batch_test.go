package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// batchSink is a fakeSink that also takes batches; batchFn, when set, runs
// first and decides the result of a whole batch.
type batchSink struct {
	fakeSink
	bmu     sync.Mutex
	sizes   []int
	batchFn func(writes []Write) error
}

func (s *batchSink) WriteBatch(ctx context.Context, writes []Write) error {
	if s.batchFn != nil {
		if err := s.batchFn(writes); err != nil {
			return err
		}
	}
	s.bmu.Lock()
	s.sizes = append(s.sizes, len(writes))
	s.bmu.Unlock()
	for _, w := range writes {
		if err := s.fakeSink.Write(ctx, w.Event, w.Update); err != nil {
			return err
		}
	}
	return nil
}

func (s *batchSink) batches() []int {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	return append([]int(nil), s.sizes...)
}

func TestBatchSinkGetsABurstInFewCalls(t *testing.T) {
	const n = 1200
	store := &batchSink{}
	r, _ := newTest(t, Options{AggregateMax: -1},
		[]Registration{DeliverTo("store", store).WithLimits(Limits{QPS: 1000, Burst: 2000, PendingMax: 4096})}, nil)
	for i := range n {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	rn := startRun(t, r)
	rn.awaitWait(t, idle)
	rn.stop()
	if got := len(store.got()); got != n {
		t.Fatalf("%d Events written, want %d", got, n)
	}
	if b := store.batches(); len(b) != 3 || b[0] != maxBatch || b[2] != n-2*maxBatch {
		t.Fatalf("batch sizes %v, want [%d %d %d]", b, maxBatch, maxBatch, n-2*maxBatch)
	}
	checkBalance(t, r, "store")
}

func TestBatchHonoursTheTokenBucket(t *testing.T) {
	store := &batchSink{}
	r, clk := newTest(t, Options{AggregateMax: -1},
		[]Registration{DeliverTo("store", store).WithLimits(Limits{QPS: 10, Burst: 5, PendingMax: 100})}, nil)
	for i := range 8 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	rn := startRun(t, r)
	if d := rn.awaitWait(t, func(d time.Duration) bool { return d > 0 }); d != 100*time.Millisecond {
		t.Fatalf("after the burst the next write waits %v, want 100ms at 10 QPS", d)
	}
	if b := store.batches(); len(b) != 1 || b[0] != 5 {
		t.Fatalf("first batches %v, want one of the burst of 5", b)
	}
	for range 3 {
		clk.Step(100 * time.Millisecond)
		rn.awaitWaitFrom(t, clk.Now(), func(time.Duration) bool { return true })
	}
	rn.stop()
	if got := len(store.got()); got != 8 {
		t.Fatalf("%d Events written, want 8", got)
	}
	checkBalance(t, r, "store")
}

func TestFailedBatchRetriesEveryEvent(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	attempts := make(chan int, 16)
	store := &batchSink{batchFn: func(w []Write) error {
		attempts <- len(w)
		if fail.Load() {
			return errors.New("EIO")
		}
		return nil
	}}
	r, clk := newTest(t, Options{AggregateMax: -1, RetryInitial: time.Second, RetryMax: 4 * time.Second, RetryJitter: -1},
		[]Registration{DeliverTo("store", store).WithLimits(Limits{QPS: 1000, Burst: 1000, PendingMax: 100})}, nil)
	for i := range 10 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	rn := startRun(t, r)
	if got := <-attempts; got != 10 {
		t.Fatalf("first batch of %d, want 10", got)
	}
	if d := rn.awaitWait(t, func(d time.Duration) bool { return d > 0 }); d != time.Second {
		t.Fatalf("after a failed batch the sink waits %v, want 1s", d)
	}
	fail.Store(false)
	clk.Step(time.Second)
	if got := <-attempts; got != 10 {
		t.Fatalf("retried batch of %d, want all 10", got)
	}
	rn.awaitWaitFrom(t, clk.Now(), idle)
	rn.stop()
	s := sinkStats(t, r, "store")
	if s.Written != 10 || s.Failed != 10 || len(store.got()) != 10 {
		t.Fatalf("stats %+v, %d written to the sink; want 10 written after 10 failed", s, len(store.got()))
	}
	checkBalance(t, r, "store")
}

func TestFlushDrainsInBatches(t *testing.T) {
	store := &batchSink{}
	r, _ := newTest(t, Options{AggregateMax: -1},
		[]Registration{DeliverTo("store", store).WithLimits(Limits{QPS: 1, Burst: 1, PendingMax: 4096})}, nil)
	for i := range 1000 {
		mustRecord(t, r, occ("R", fmt.Sprintf("m%d", i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if b := store.batches(); len(b) != 2 {
		t.Fatalf("flush of 1000 took batches %v, want 2", b)
	}
	checkBalance(t, r, "store")
}
