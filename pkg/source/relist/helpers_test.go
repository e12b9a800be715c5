package relist

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// collector keeps what a detector sends, as it sends it.
type collector struct {
	mu      sync.Mutex
	obs     []types.RelistObservation
	changed chan struct{} // closed and replaced on every observation
}

// collect reads out until ctx ends; the returned wait returns once the
// reading goroutine is done.
func collect(ctx context.Context, out <-chan types.RelistObservation) (*collector, func()) {
	c := &collector{changed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case o := <-out:
				c.mu.Lock()
				c.obs = append(c.obs, o)
				close(c.changed)
				c.changed = make(chan struct{})
				c.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	return c, func() { <-done }
}

func (c *collector) snapshot() ([]types.RelistObservation, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]types.RelistObservation(nil), c.obs...), c.changed
}

// wait returns the observations once cond holds for them, or fails the
// test after limit.
func (c *collector) wait(t *testing.T, limit time.Duration, what string, cond func([]types.RelistObservation) bool) []types.RelistObservation {
	t.Helper()
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for {
		obs, ch := c.snapshot()
		if cond(obs) {
			return obs
		}
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatalf("no %s within %v; observed:\n%s", what, limit, dump(obs))
		}
	}
}

func dump(obs []types.RelistObservation) string {
	var s string
	for _, o := range obs {
		if o.Relist != nil {
			s += "  relist at " + o.Relist.At.Format("15:04:05.000") + " seen +" + o.Relist.Seen.Sub(o.Relist.At).String()
			if o.Relist.OnPhase {
				s += " on phase"
			}
			s += "\n"
			continue
		}
		s += "  phase " + o.Phase.State.String() + " " + o.Phase.Period.String() + " " + o.Phase.Why + "\n"
	}
	return s
}

func relists(obs []types.RelistObservation) []types.KubeletRelist {
	var out []types.KubeletRelist
	for _, o := range obs {
		if o.Relist != nil {
			out = append(out, *o.Relist)
		}
	}
	return out
}

func last(obs []types.RelistObservation) types.RelistPhase {
	if len(obs) == 0 {
		return types.RelistPhase{}
	}
	return obs[len(obs)-1].Phase
}

// opens is an open of each name in turn; "" is the folder.
func opens(names ...string) []event {
	out := make([]event, len(names))
	for i, n := range names {
		out[i] = event{op: opened, name: n}
	}
	return out
}
