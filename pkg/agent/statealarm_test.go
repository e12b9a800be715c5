package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/types"
)

// capture is a stream sink that keeps what it is given.
type capture struct {
	mu  sync.Mutex
	evs []*v1.Event
}

func (c *capture) Write(_ context.Context, ev *v1.Event, _ bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, ev)
	return nil
}

func (c *capture) all() []*v1.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*v1.Event(nil), c.evs...)
}

func TestStateAlarmWarnsOncePerFailingSpell(t *testing.T) {
	out := &capture{}
	rec, err := events.New(events.Options{Host: "n1"}, clock.RealClock{}, nil, []events.Registration{events.StreamTo("stdout", out)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test", clock.RealClock{})
	a := &stateAlarm{ctx: context.Background(), rec: rec, log: slog.New(slog.DiscardHandler), metrics: m, node: "n1", dir: "/var/lib/podwatch"}
	full := errors.Join(
		fmt.Errorf("store: save pods-07.json in /var/lib/podwatch: %w", errors.New("no space left on device")),
		fmt.Errorf("store: save state.json in /var/lib/podwatch: %w", errors.New("no space left on device")))
	says := func(what string, want ...string) {
		t.Helper()
		evs := out.all()
		if len(evs) != len(want) {
			t.Fatalf("%s: %d Events, want %d: %v", what, len(evs), len(want), evs)
		}
		for i, w := range want {
			if got := evs[i].Type + " " + evs[i].Reason; got != w {
				t.Fatalf("%s: Event %d is %s, want %s", what, i, got, w)
			}
		}
	}
	persisted := func() float64 {
		t.Helper()
		v := testutil.MetricValue(testutil.GatherMetrics(t, m), "podwatch_state_persisted")
		if v < 0 {
			t.Fatal("no podwatch_state_persisted")
		}
		return v
	}

	a.status(true, nil)
	says("saved")
	for range stateWarnAfter - 1 {
		a.status(false, full)
	}
	says("failing, not yet for long")
	if got := persisted(); got != 0 {
		t.Fatalf("podwatch_state_persisted %v after a failed save, want 0", got)
	}
	a.status(false, full)
	warning := types.ReasonStateNotPersisted
	says("failing for long", "Warning "+warning)
	w := out.all()[0]
	for _, part := range []string{"/var/lib/podwatch", "pods-07.json", "no space left on device", "and 1 more", "3 times in a row", "30s"} {
		if !strings.Contains(w.Message, part) {
			t.Errorf("Warning %q does not say %q", w.Message, part)
		}
	}
	if w.InvolvedObject.Kind != "Node" || w.InvolvedObject.Name != "n1" {
		t.Errorf("Warning about %+v, want the Node", w.InvolvedObject)
	}
	a.status(false, full)
	a.status(false, errors.New("other"))
	says("still failing", "Warning "+warning)

	a.status(true, nil)
	says("saved again", "Warning "+warning, "Normal "+types.ReasonStatePersisted)
	if n := out.all()[1]; !strings.Contains(n.Message, "after 5 failed attempts") || !strings.Contains(n.Message, "/var/lib/podwatch") {
		t.Errorf("recovery Event %q", n.Message)
	}
	if got := persisted(); got != 1 {
		t.Errorf("podwatch_state_persisted %v after the save, want 1", got)
	}
	a.status(true, nil)
	a.status(false, full)
	says("one failure after recovering", "Warning "+warning, "Normal "+types.ReasonStatePersisted)
	a.status(false, full)
	a.status(false, full)
	says("a second spell", "Warning "+warning, "Normal "+types.ReasonStatePersisted, "Warning "+warning)
}
