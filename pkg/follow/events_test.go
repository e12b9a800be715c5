package follow

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/cri"
)

// pkg/cri's client streams events: the agent's follower gets them.
var _ Events = (*cri.Client)(nil)

// streamingRuntime is a fakeRuntime that streams container events: each
// GetContainerEvents returns open's stream (or error).
type streamingRuntime struct {
	*fakeRuntime
	open func(ctx context.Context) (cri.ContainerEventStream, error)

	mu    sync.Mutex
	calls int
}

func (r *streamingRuntime) GetContainerEvents(ctx context.Context) (cri.ContainerEventStream, error) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	return r.open(ctx)
}

func (r *streamingRuntime) opened() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func (r *fakeRuntime) listed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists
}

// fakeStream hands out what is sent on events, io.EOF once it is closed,
// and err, when set, at once.
type fakeStream struct {
	grpc.ClientStream // never called: the follower only Recvs
	ctx               context.Context
	events            chan *cri.ContainerEventResponse
	err               error
}

func (s *fakeStream) Recv() (*cri.ContainerEventResponse, error) {
	if s.err != nil {
		return nil, s.err
	}
	select {
	case e, ok := <-s.events:
		if !ok {
			return nil, io.EOF
		}
		return e, nil
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

// until calls cond until it holds, firing the fake clock's due timers
// without moving it; it fails the test after 10 s.
func until(t *testing.T, clk *testingclock.FakeClock, what string, cond func() bool) {
	t.Helper()
	limit := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(limit) {
			t.Fatalf("never: %s", what)
		}
		clk.SetTime(clk.Now())
		time.Sleep(5 * time.Millisecond) // polling a condition, not waiting for time
	}
}

// An event about a static pod's container brings the next poll forward
// from the idle rate to now: no fake time passes between the event and
// the poll.
func TestContainerEventWakesThePoll(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	events := make(chan *cri.ContainerEventResponse)
	rt := &streamingRuntime{fakeRuntime: newFakeRuntime(), open: func(ctx context.Context) (cri.ContainerEventStream, error) {
		return &fakeStream{ctx: ctx, events: events}, nil
	}}
	f := New(Options{}, rt, clk, nil, (&emitted{}).emit, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()

	until(t, clk, "the first poll", func() bool { return rt.listed() == 1 })
	// Past the fast rate, well before the idle poll is due.
	clk.Step(2 * time.Second)
	ev := &cri.ContainerEventResponse{
		ContainerId: "c1", ContainerEventType: cri.ContainerEventType_CONTAINER_STARTED_EVENT,
		PodSandboxStatus: &cri.PodSandboxStatus{Annotations: map[string]string{annotationSource: "file"}},
	}
	select {
	case events <- ev:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower never read the stream")
	}
	until(t, clk, "a poll after the event", func() bool { return rt.listed() == 2 })
	if got := clk.Now(); !got.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("polled at %v", got)
	}
	if rt.opened() != 1 {
		t.Errorf("the stream was opened %d times, want once", rt.opened())
	}
}

// A runtime that does not stream (its stream ends at once, as
// cri-client's fake's does, fails with Unimplemented, or cannot be
// opened) is asked again with a growing backoff on the follower's clock,
// never in a loop: ten minutes cost about ten calls.
func TestNoStreamDoesNotSpin(t *testing.T) {
	for name, open := range map[string]func(ctx context.Context) (cri.ContainerEventStream, error){
		"ends at once": func(ctx context.Context) (cri.ContainerEventStream, error) {
			ch := make(chan *cri.ContainerEventResponse)
			close(ch)
			return &fakeStream{ctx: ctx, events: ch}, nil
		},
		"unimplemented": func(ctx context.Context) (cri.ContainerEventStream, error) {
			return &fakeStream{ctx: ctx, err: status.Error(codes.Unimplemented, "unknown method GetContainerEvents")}, nil
		},
		"cannot open": func(context.Context) (cri.ContainerEventStream, error) {
			return nil, errors.New("connection refused")
		},
	} {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			rt := &streamingRuntime{fakeRuntime: newFakeRuntime(), open: open}
			watchInBackground(t, rt, clk)
			for clk.Since(t0) < 10*time.Minute {
				waitForWaiter(t, clk, rt)
				clk.Step(10 * time.Second)
			}
			if n := rt.opened(); n < 5 || n > 12 {
				t.Fatalf("%d calls in 10 minutes, want about 10 (backoff from %v to %v)", n, eventsRetryInitial, eventsRetryMax)
			}
		})
	}
}

// A stream that delivered events and then ended is opened again after the
// initial wait: it was streaming.
func TestStreamThatEndsAfterEventsIsOpenedSoon(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	rt := &streamingRuntime{fakeRuntime: newFakeRuntime()}
	rt.open = func(ctx context.Context) (cri.ContainerEventStream, error) {
		ch := make(chan *cri.ContainerEventResponse, 1)
		ch <- &cri.ContainerEventResponse{ContainerId: "c1"}
		close(ch)
		return &fakeStream{ctx: ctx, events: ch}, nil
	}
	watchInBackground(t, rt, clk)
	for i := 1; i <= 5; i++ {
		waitForWaiter(t, clk, rt)
		if n := rt.opened(); n != i {
			t.Fatalf("after %v, %d calls, want %d", clk.Since(t0), n, i)
		}
		clk.Step(eventsRetryInitial)
	}
}

func TestEventsAboutStaticPods(t *testing.T) {
	for _, tt := range []struct {
		sb   *cri.PodSandboxStatus
		want bool
	}{
		{nil, true},
		{&cri.PodSandboxStatus{Annotations: map[string]string{annotationSource: "file"}}, true},
		{&cri.PodSandboxStatus{Annotations: map[string]string{annotationSource: "api"}}, false},
		{&cri.PodSandboxStatus{}, false},
	} {
		if got := aboutStaticPod(&cri.ContainerEventResponse{PodSandboxStatus: tt.sb}); got != tt.want {
			t.Errorf("aboutStaticPod(%v) = %v", tt.sb, got)
		}
	}
}

// After an event the poll comes at once, but never sooner than the fast
// rate after the last one, and never later than it was due anyway.
func TestPokedPoll(t *testing.T) {
	idle := t0.Add(DefaultIdlePollInterval)
	for _, tt := range []struct {
		next, now, last, want time.Time
	}{
		{idle, t0.Add(5 * time.Second), t0, t0.Add(5 * time.Second)},
		{idle, t0.Add(100 * time.Millisecond), t0, t0.Add(DefaultPollInterval)},
		{t0.Add(200 * time.Millisecond), t0.Add(100 * time.Millisecond), t0, t0.Add(200 * time.Millisecond)},
		{idle, t0, time.Time{}, t0},
	} {
		if got := pokedPoll(tt.next, tt.now, tt.last, DefaultPollInterval); !got.Equal(tt.want) {
			t.Errorf("pokedPoll(next %v, now %v, last %v) = %v, want %v", tt.next.Sub(t0), tt.now.Sub(t0), tt.last.Sub(t0), got.Sub(t0), tt.want.Sub(t0))
		}
	}
}

// watchInBackground runs a follower's event watch on rt until the test
// ends.
func watchInBackground(t *testing.T, rt *streamingRuntime, clk *testingclock.FakeClock) {
	f := New(Options{}, rt, clk, nil, (&emitted{}).emit, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.watchEvents(ctx, rt)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// waitForWaiter returns once the watch waits on the fake clock, and fails
// the test when it does not within 5 s of real time: it spins.
func waitForWaiter(t *testing.T, clk *testingclock.FakeClock, rt *streamingRuntime) {
	t.Helper()
	limit := time.Now().Add(5 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(limit) {
			t.Fatalf("not waiting on the clock after %d calls: it spins", rt.opened())
		}
		time.Sleep(time.Millisecond) // polling a condition, not waiting for time
	}
}
