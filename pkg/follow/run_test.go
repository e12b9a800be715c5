package follow

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// Run polls on its clock, reports through Emit and returns nil when its
// context ends, leaving no goroutine behind.
func TestRunReportsAndStops(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	rt := newFakeRuntime()
	out := &emitted{ch: make(chan types.Change, 4)}
	f := New(Options{}, rt, clk, nil, out.emit, nil, nil)
	f.Submit([]types.Change{{Op: types.OpAdd, Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver}, File: "kube-apiserver.yaml", Pod: apiPod(""), At: t0}})
	rt.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
	rt.container("sb", "kube-apiserver", "img", 0, t0.Add(2*time.Second))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// The first poll is due at once; the fake clock fires it when set.
	deadline := time.Now().Add(10 * time.Second)
	var got types.Change
wait:
	for {
		clk.SetTime(clk.Now())
		select {
		case got = <-out.ch:
			break wait
		case <-time.After(10 * time.Millisecond): // polling a condition, not waiting for time
		}
		if time.Now().After(deadline) {
			t.Fatal("no report from Run")
		}
	}
	if got.Reason != types.ReasonStarted || got.Type != v1.EventTypeNormal {
		t.Fatalf("reported %+v", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// A change makes the next poll come at the fast rate, not the idle one.
func TestWakeBringsThePollForward(t *testing.T) {
	now := t0
	idle := now.Add(DefaultIdlePollInterval)
	if got := soonest(idle, now, DefaultPollInterval); !got.Equal(now.Add(DefaultPollInterval)) {
		t.Fatalf("after a change the next poll is at %v, want %v", got, now.Add(DefaultPollInterval))
	}
	if got := soonest(now, now, DefaultPollInterval); !got.Equal(now) {
		t.Fatalf("a poll due now is put off to %v", got)
	}
}
