package follow

import (
	"errors"
	"maps"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// overdue is an Overdue map holding one pod of reason and cause.
func overdue(reason string, cause types.FollowCause) map[types.FollowOverdue]int {
	return map[types.FollowOverdue]int{{Reason: reason, Cause: cause}: 1}
}

func wantObserved(t *testing.T, got types.FollowObservation, over map[types.FollowOverdue]int, reports ...types.FollowReport) {
	t.Helper()
	if !maps.Equal(got.Overdue, over) {
		t.Errorf("overdue %v, want %v", got.Overdue, over)
	}
	if len(got.Reports) != len(reports) {
		t.Fatalf("reports %+v, want %+v", got.Reports, reports)
	}
	for i := range reports {
		if got.Reports[i] != reports[i] {
			t.Errorf("report %d: %+v, want %+v", i, got.Reports[i], reports[i])
		}
	}
}

// Each poll tells the observer the pods past their deadline, by what is
// seen instead, and what it reported with the time to the outcome: a pod
// waiting for the old one counts from the deadline, and no longer once it
// runs.
func TestObserverSeesOverduePodsAndOutcomes(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("old", apiserver, "uid-old", t0.Add(-time.Hour), true)
	h.rt.container("old", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.1", 0, t0.Add(-time.Hour))
	h.submit(types.OpUpdate, 0, apiPod(""))
	none(t, h.at(time.Second))
	wantObserved(t, h.obs.last(t), nil) // before the deadline: not overdue
	one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning)
	wantObserved(t, h.obs.last(t), overdue(types.ReasonNotStarted, types.CauseOldPodRunning),
		types.FollowReport{Reason: types.ReasonNotStarted, Type: v1.EventTypeWarning})
	none(t, h.at(deadline+10*time.Second))
	wantObserved(t, h.obs.last(t), overdue(types.ReasonNotStarted, types.CauseOldPodRunning)) // still, no report

	// The old pod stops; the new sandbox is there, its container not yet:
	// the cause follows what the poll sees.
	h.rt.setSandboxReady("old", false)
	h.rt.sandbox("new", apiserver, "uid-new", t0.Add(deadline+15*time.Second), true)
	none(t, h.at(deadline+20*time.Second))
	wantObserved(t, h.obs.last(t), overdue(types.ReasonNotStarted, types.CauseContainerNotCreated))

	h.rt.container("new", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(deadline+22*time.Second))
	one(t, h.at(deadline+25*time.Second), types.ReasonStarted, v1.EventTypeNormal)
	wantObserved(t, h.obs.last(t), nil,
		types.FollowReport{Reason: types.ReasonStarted, Type: v1.EventTypeNormal, Took: deadline + 22*time.Second})
}

// The cause of each way a pod does not start, and of a removed pod that
// still runs.
func TestObserverCauses(t *testing.T) {
	for _, tt := range []struct {
		name string
		op   types.Op
		set  func(r *fakeRuntime)
		want types.FollowOverdue
	}{
		{"no sandbox", types.OpAdd, func(*fakeRuntime) {}, types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseNoSandbox}},
		{"sandbox not ready", types.OpAdd, func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), false)
		}, types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseSandboxNotReady}},
		{"created", types.OpAdd, func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
			id := r.container("sb", "kube-apiserver", "img", 0, t0.Add(2*time.Second))
			r.state(id, cri.ContainerState_CONTAINER_CREATED, 0, "")
		}, types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseContainerNotRunning}},
		{"exited", types.OpAdd, func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
			id := r.container("sb", "kube-apiserver", "img", 2, t0.Add(2*time.Second))
			r.state(id, cri.ContainerState_CONTAINER_EXITED, 1, "Error")
		}, types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseContainerExited}},
		{"runtime down", types.OpAdd, func(r *fakeRuntime) {
			r.fail(errors.New("connection refused"))
		}, types.FollowOverdue{Reason: types.ReasonNotStarted, Cause: types.CauseRuntimeUnavailable}},
		{"still running", types.OpRemove, func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(-time.Hour), true)
		}, types.FollowOverdue{Reason: types.ReasonNotStopped, Cause: types.CauseStillRunning}},
		{"runtime down at a remove", types.OpRemove, func(r *fakeRuntime) {
			r.fail(errors.New("connection refused"))
		}, types.FollowOverdue{Reason: types.ReasonNotStopped, Cause: types.CauseRuntimeUnavailable}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			var pod *types.Pod
			if tt.op != types.OpRemove {
				pod = apiPod("")
			}
			h.submit(tt.op, 0, pod)
			tt.set(h.rt)
			h.at(deadline)
			got := h.obs.last(t)
			if !maps.Equal(got.Overdue, map[types.FollowOverdue]int{tt.want: 1}) {
				t.Errorf("overdue %v, want %v", got.Overdue, tt.want)
			}
		})
	}
}

// A failed poll is observed with its error, and a restart with no change
// as a report.
func TestObserverSeesPollErrorsAndRestarts(t *testing.T) {
	h := newHarness(t, "kube-system/"+apiserver)
	h.rt.sandbox("sb", apiserver, "uid-1", t0.Add(-time.Hour), true)
	id := h.rt.container("sb", "kube-apiserver", "img", 0, t0.Add(-time.Hour))
	none(t, h.at(0))
	if got := h.obs.last(t); got.RuntimeErr != nil || len(got.Reports) != 0 {
		t.Fatalf("observed %+v after a poll that answered", got)
	}
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 137, "OOMKilled")
	h.rt.container("sb", "kube-apiserver", "img", 1, t0.Add(15*time.Second))
	one(t, h.at(20*time.Second), types.ReasonRestarting, v1.EventTypeWarning)
	wantObserved(t, h.obs.last(t), nil, types.FollowReport{Reason: types.ReasonRestarting, Type: v1.EventTypeWarning})

	refused := errors.New("connection refused")
	h.rt.fail(refused)
	none(t, h.at(30*time.Second))
	if got := h.obs.last(t); !errors.Is(got.RuntimeErr, refused) {
		t.Fatalf("observed error %v, want %v", got.RuntimeErr, refused)
	}
}
