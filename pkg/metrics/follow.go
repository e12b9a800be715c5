package metrics

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// followMetrics say what the follower (pkg/follow) finds. The overdue
// gauge is labelled by reason and cause, not by pod: both are closed sets,
// so its series exist from the start at 0 and their number does not grow
// with the manifests of a folder (which may hold thousands); the
// StaticPodNotStarted Event names the pod.
type followMetrics struct {
	overdue    *vec[gauge]
	outcomes   *vec[counter]
	duration   *vec[histogram]
	polls      *scalar
	pollErrors *scalar
}

// followBuckets span a container restarted from a cached image (a second
// or two) to a control-plane image pulled on a slow link, past the
// default --follow-deadline.
func followBuckets() []float64 {
	return []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 180, 300, 600}
}

// followOverdue are the reason and cause pairs the follower can report:
// a removed pod is only ever still running, or not known to be stopped.
func followOverdue() []types.FollowOverdue {
	var out []types.FollowOverdue
	for _, c := range types.FollowCauses() {
		if c != types.CauseStillRunning {
			out = append(out, types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: c})
		}
	}
	return append(out,
		types.FollowOverdue{Reason: types.ReasonNotStopped, Cause: types.CauseStillRunning},
		types.FollowOverdue{Reason: types.ReasonNotStopped, Cause: types.CauseRuntimeUnavailable})
}

// followReports are the reason and type pairs the follower records.
func followReports() []struct{ reason, typ string } {
	normal, warning := v1.EventTypeNormal, v1.EventTypeWarning
	return []struct{ reason, typ string }{
		{types.ReasonStarted, normal},
		{types.ReasonNotStarted, warning},
		{types.ReasonStopped, normal},
		{types.ReasonNotStopped, warning},
		{types.ReasonRestarting, warning},
	}
}

func newFollowMetrics() followMetrics {
	f := followMetrics{
		overdue: newGaugeVec("podwatch_follow_overdue_pods",
			"Static pods whose last change is past --follow-deadline: not running it (reason StaticPodNotStarted) or not stopped (StaticPodNotStopped), by what the last poll (of the container runtime, or of the mirror pods alone) saw instead (cause).",
			"reason", "cause"),
		outcomes: newCounterVec("podwatch_follow_outcomes_total",
			"What following the changes to the running pods reported, by reason (StaticPodStarted, StaticPodNotStarted and its repeats, StaticPodStopped, StaticPodNotStopped, StaticPodRestarting).",
			"reason"),
		duration: newHistogramVec("podwatch_follow_duration_seconds",
			"Time from a change to StaticPodStarted (to the runtime's creation of the last sandbox or container it rests on) or to StaticPodStopped (to the poll that saw it).",
			followBuckets(), "reason"),
		polls: newCounter("podwatch_follow_runtime_polls_total",
			"Polls of what the follower reads: the container runtime (one ListPodSandbox and one ListContainers each), or the mirror pods alone."),
		pollErrors: newCounter("podwatch_follow_runtime_poll_errors_total",
			"Polls that failed (of the container runtime, or of the mirror pods alone); changes are judged when it answers again."),
	}
	for _, o := range followOverdue() {
		f.overdue.WithLabelValues(o.Reason, string(o.Cause))
	}
	for _, r := range followReports() {
		f.outcomes.WithLabelValues(r.reason)
	}
	for _, r := range []string{types.ReasonStarted, types.ReasonStopped} {
		f.duration.WithLabelValues(r)
	}
	return f
}

func (f followMetrics) collectors() []family {
	return []family{f.overdue, f.outcomes, f.duration, f.polls, f.pollErrors}
}

// ErrFollowEnabled is returned by a second EnableFollow.
var ErrFollowEnabled = errors.New("metrics: follow metrics already enabled")

// EnableFollow adds the follower's metrics to the registry: an agent that
// does not follow has none, so that a rule cannot mistake not following for
// every pod running its change. Their labelled series start at 0. It can
// be called once.
func (m *Metrics) EnableFollow() error {
	if err := m.reg.register(m.follow.collectors()...); err != nil {
		if errors.Is(err, errAlreadyRegistered) {
			return ErrFollowEnabled
		}
		return fmt.Errorf("metrics: enabling follow metrics: %w", err)
	}
	for _, r := range followReports() {
		m.recorded.WithLabelValues(r.reason, r.typ)
	}
	return nil
}

// ObserveFollow updates what a poll of the follower tells; its Events
// count in podwatch_events_recorded_total too, as the diff's do.
func (m *Metrics) ObserveFollow(o types.FollowObservation) {
	if m == nil {
		return
	}
	m.follow.polls.Inc()
	if o.RuntimeErr != nil {
		m.follow.pollErrors.Inc()
	}
	// Every pair is set, to 0 when absent, so a pod that recovers takes
	// its series back down; followOverdue holds every pair the follower
	// reports.
	for _, k := range followOverdue() {
		m.follow.overdue.WithLabelValues(k.Reason, string(k.Cause)).Set(float64(o.Overdue[k]))
	}
	for _, r := range o.Reports {
		m.follow.outcomes.WithLabelValues(r.Reason).Inc()
		m.recorded.WithLabelValues(r.Reason, r.Type).Inc()
		if r.Reason == types.ReasonStarted || r.Reason == types.ReasonStopped {
			m.follow.duration.WithLabelValues(r.Reason).Observe(r.Took.Seconds())
		}
	}
}
