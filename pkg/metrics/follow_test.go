package metrics

import (
	"errors"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// An agent that does not follow has no follow metrics; one that does has
// every labelled series at 0 before the first poll, so that a rule sees
// the first overdue pod as a change of value.
func TestFollowMetricsOnlyWhenEnabledAndFromZero(t *testing.T) {
	m := New("v", nil)
	tg := serve(t, m)
	if mfs := tg.scrape(); mfs["podwatch_follow_overdue_pods"] != nil || mfs["podwatch_follow_runtime_polls_total"] != nil {
		t.Fatal("follow metrics served without EnableFollow")
	}
	if err := m.EnableFollow(); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableFollow(); !errors.Is(err, ErrFollowEnabled) {
		t.Errorf("second EnableFollow = %v, want ErrFollowEnabled", err)
	}
	mfs := tg.scrape()
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"podwatch_follow_overdue_pods", []string{"reason", types.ReasonNotStarted, "cause", string(types.CauseOldPodRunning)}},
		{"podwatch_follow_overdue_pods", []string{"reason", types.ReasonNotStarted, "cause", string(types.CauseContainerExited)}},
		{"podwatch_follow_overdue_pods", []string{"reason", types.ReasonNotStarted, "cause", string(types.CauseRuntimeUnavailable)}},
		{"podwatch_follow_overdue_pods", []string{"reason", types.ReasonNotStopped, "cause", string(types.CauseStillRunning)}},
		{"podwatch_follow_outcomes_total", []string{"reason", types.ReasonStarted}},
		{"podwatch_follow_outcomes_total", []string{"reason", types.ReasonNotStarted}},
		{"podwatch_follow_outcomes_total", []string{"reason", types.ReasonRestarting}},
		{"podwatch_follow_duration_seconds", []string{"reason", types.ReasonStarted}},
		{"podwatch_follow_duration_seconds", []string{"reason", types.ReasonStopped}},
		{"podwatch_follow_runtime_polls_total", nil},
		{"podwatch_follow_runtime_poll_errors_total", nil},
		{"podwatch_events_recorded_total", []string{"reason", types.ReasonNotStarted, "type", v1.EventTypeWarning}},
	} {
		if got := value(mfs, c.name, c.labels...); got != 0 {
			t.Errorf("%s%v = %v, want 0 (series present)", c.name, c.labels, got)
		}
	}
	// A removed pod is never "not started" for a cause of its own.
	if got := value(mfs, "podwatch_follow_overdue_pods", "reason", types.ReasonNotStarted, "cause", string(types.CauseStillRunning)); got != -1 {
		t.Errorf("a NotStarted series for still_running exists: %v", got)
	}
}

// Each observation sets the overdue gauge (back to 0 for a pod that
// recovered), counts the reports and polls, and times the outcomes.
func TestObserveFollow(t *testing.T) {
	m := New("v", nil)
	if err := m.EnableFollow(); err != nil {
		t.Fatal(err)
	}
	tg := serve(t, m)
	oldPod := types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseOldPodRunning}
	exited := types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseContainerExited}
	m.ObserveFollow(types.FollowObservation{
		Overdue: map[types.FollowOverdue]int{oldPod: 1, exited: 2},
		Reports: []types.FollowReport{{Reason: types.ReasonNotStarted, Type: v1.EventTypeWarning}, {Reason: types.ReasonNotStarted, Type: v1.EventTypeWarning}},
	})
	mfs := tg.scrape()
	overdue := func(o types.FollowOverdue) float64 {
		return value(mfs, "podwatch_follow_overdue_pods", "reason", o.Reason, "cause", string(o.Cause))
	}
	if a, b := overdue(oldPod), overdue(exited); a != 1 || b != 2 {
		t.Errorf("overdue old_pod_running %v, container_exited %v; want 1, 2", a, b)
	}
	if got := value(mfs, "podwatch_follow_outcomes_total", "reason", types.ReasonNotStarted); got != 2 {
		t.Errorf("NotStarted outcomes %v, want 2", got)
	}
	if got := value(mfs, "podwatch_events_recorded_total", "reason", types.ReasonNotStarted, "type", v1.EventTypeWarning); got != 2 {
		t.Errorf("NotStarted recorded %v, want 2", got)
	}

	m.ObserveFollow(types.FollowObservation{
		Overdue: map[types.FollowOverdue]int{exited: 1},
		Reports: []types.FollowReport{{Reason: types.ReasonStarted, Type: v1.EventTypeNormal, Took: 12400 * time.Millisecond}},
	})
	m.ObserveFollow(types.FollowObservation{RuntimeErr: errors.New("connection refused")})
	mfs = tg.scrape()
	if a, b := overdue(oldPod), overdue(exited); a != 0 || b != 0 {
		t.Errorf("after recovery overdue old_pod_running %v, container_exited %v; want 0, 0", a, b)
	}
	if got := value(mfs, "podwatch_follow_outcomes_total", "reason", types.ReasonStarted); got != 1 {
		t.Errorf("Started outcomes %v, want 1", got)
	}
	h := mfs["podwatch_follow_duration_seconds"]
	for _, s := range h.GetMetric() {
		if labelOf(s.GetLabel(), "reason") != types.ReasonStarted {
			continue
		}
		if s.GetHistogram().GetSampleCount() != 1 || s.GetHistogram().GetSampleSum() != 12.4 {
			t.Errorf("Started duration: %d samples, sum %v; want 1, 12.4", s.GetHistogram().GetSampleCount(), s.GetHistogram().GetSampleSum())
		}
	}
	if p, e := value(mfs, "podwatch_follow_runtime_polls_total"), value(mfs, "podwatch_follow_runtime_poll_errors_total"); p != 3 || e != 1 {
		t.Errorf("polls %v, errors %v; want 3, 1", p, e)
	}
}

func labelOf(ls []*dto.LabelPair, name string) string {
	for _, l := range ls {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
