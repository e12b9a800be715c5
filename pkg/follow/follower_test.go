package follow

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const (
	apiserver = "kube-apiserver-node-1"
	deadline  = 3 * time.Minute
)

// harness is a follower driven step by step on a fake clock.
type harness struct {
	t   *testing.T
	clk *testingclock.FakeClock
	rt  *fakeRuntime
	out *emitted
	obs *observations
	f   *Follower
}

func newHarness(t *testing.T, known ...string) *harness {
	h := &harness{t: t, clk: testingclock.NewFakeClock(t0), rt: newFakeRuntime(), out: &emitted{}, obs: &observations{}}
	h.f = New(Options{Deadline: deadline}, h.rt, h.clk, nil, h.out.emit, h.obs, known)
	return h
}

// at moves the clock to t0+d and polls once, returning what was reported.
func (h *harness) at(d time.Duration) []types.Change {
	h.t.Helper()
	h.clk.SetTime(t0.Add(d))
	h.f.step(context.Background())
	return h.out.take()
}

func (h *harness) submit(op types.Op, at time.Duration, pod *types.Pod) {
	h.f.Submit([]types.Change{{
		Op: op, Reason: "x", Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
		File: "kube-apiserver.yaml", Pod: pod, At: t0.Add(at),
	}})
}

func apiPod(uid ktypes.UID, containers ...string) *types.Pod {
	if len(containers) == 0 {
		containers = []string{"kube-apiserver=registry.k8s.io/kube-apiserver:v1.37.2"}
	}
	return &types.Pod{Key: "kube-system/" + apiserver, UID: uid, Containers: containers}
}

// one requires exactly one report, of reason and type, whose message holds
// every part.
func one(t *testing.T, chs []types.Change, reason, typ string, parts ...string) types.Change {
	t.Helper()
	if len(chs) != 1 || chs[0].Reason != reason || chs[0].Type != typ {
		t.Fatalf("reported %+v, want one %s %s", chs, typ, reason)
	}
	for _, p := range parts {
		if !strings.Contains(chs[0].Message, p) {
			t.Errorf("message %q lacks %q", chs[0].Message, p)
		}
	}
	if chs[0].Object != (types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver}) {
		t.Errorf("about %+v", chs[0].Object)
	}
	return chs[0]
}

func none(t *testing.T, chs []types.Change) {
	t.Helper()
	if len(chs) != 0 {
		t.Fatalf("reported %+v, want nothing", chs)
	}
}

func TestAddStarts(t *testing.T) {
	h := newHarness(t)
	h.submit(types.OpAdd, 0, apiPod(""))
	none(t, h.at(time.Second)) // nothing yet: not a failure before the deadline
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(2*time.Second), true)
	none(t, h.at(3*time.Second)) // a sandbox, no container
	h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(12400*time.Millisecond))
	// The time is the runtime's, from the change to the last creation,
	// not when the poll saw it.
	one(t, h.at(20*time.Second), types.ReasonStarted, v1.EventTypeNormal,
		"kube-apiserver-node-1 runs the change from kube-apiserver.yaml 12.4 s after it was written")
	none(t, h.at(21*time.Second))
	none(t, h.at(deadline+time.Minute)) // done: no warning at the deadline
}

func TestUpdateNotStartedWhileTheOldPodRunsThenRecovers(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("old", apiserver, "uid-old", t0.Add(-time.Hour), true)
	h.rt.container("old", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.1", 0, t0.Add(-time.Hour))
	h.submit(types.OpUpdate, 0, apiPod(""))
	none(t, h.at(time.Second))
	none(t, h.at(deadline-time.Second))
	first := one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning,
		"does not run the change from kube-apiserver.yaml within 3m0s", "no sandbox created since the change", "the old pod (UID uid-old) still runs")
	none(t, h.at(deadline+10*time.Second)) // not at every poll
	// Again after another deadline, with the same message, so that the
	// events package counts it on the same Event.
	again := one(t, h.at(2*deadline), types.ReasonNotStarted, v1.EventTypeWarning)
	if again.Message != first.Message {
		t.Fatalf("repeat %q differs from %q", again.Message, first.Message)
	}
	if next := h.f.nextPoll(t0.Add(2 * deadline)); next.Sub(t0.Add(2*deadline)) != DefaultIdlePollInterval {
		t.Fatalf("past its deadline the pod is polled at %v, want the idle rate", next.Sub(t0.Add(2*deadline)))
	}
	// It recovers: the kubelet runs the new pod at last.
	h.rt.setSandboxReady("old", false)
	h.rt.sandbox("new", apiserver, "uid-new", t0.Add(2*deadline+time.Second), true)
	h.rt.container("new", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(2*deadline+2*time.Second))
	one(t, h.at(2*deadline+5*time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml 6m2s after it was written")
	none(t, h.at(3*deadline))
}

// The kubelet can create a sandbox just before podwatch sees the file that
// caused it, so a sandbox up to a second older than the change counts. Not
// for a restart: the old pod's sandbox, created a moment before the edit
// (a slow first start), is not the change running.
func TestUpdateIsNotTheOldPodCreatedJustBefore(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("old", apiserver, "uid-old", t0.Add(-200*time.Millisecond), true)
	h.rt.container("old", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.1", 0, t0.Add(-100*time.Millisecond))
	h.submit(types.OpUpdate, 0, apiPod(""))
	none(t, h.at(time.Second))
	h.rt.setSandboxReady("old", false)
	h.rt.sandbox("new", apiserver, "uid-new", t0.Add(12*time.Second), true)
	h.rt.container("new", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(13*time.Second))
	one(t, h.at(14*time.Second), types.ReasonStarted, v1.EventTypeNormal, "13.0 s after it was written")
}

// A winner taken back at a relist comes back under the UID it had: its new
// sandbox, created after the change, is the change running.
func TestUpdateBackToAnEarlierUID(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("bak-1", apiserver, "uid-bak", t0.Add(-time.Minute), false)
	h.rt.sandbox("shadow", apiserver, "uid-shadow", t0.Add(-30*time.Second), false)
	h.submit(types.OpUpdate, 0, apiPod(""))
	h.rt.sandbox("bak-2", apiserver, "uid-bak", t0.Add(1500*time.Millisecond), true)
	h.rt.container("bak-2", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(2*time.Second))
	one(t, h.at(3*time.Second), types.ReasonStarted, v1.EventTypeNormal, "2.0 s after it was written")
}

// With MinRunning a container seen running counts only once it has run
// that long: one that crashes a second after it starts did not start the
// pod, and the deadline says what it does instead.
func TestMinRunning(t *testing.T) {
	h := newHarness(t)
	h.f = New(Options{Deadline: deadline, MinRunning: 5 * time.Second}, h.rt, h.clk, nil, h.out.emit, h.obs, nil)
	h.submit(types.OpAdd, 0, apiPod(""))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	id := h.rt.container("sb1", "kube-apiserver", "img", 0, t0.Add(2*time.Second))
	none(t, h.at(3*time.Second)) // running for 1 s
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 1, "Error")
	none(t, h.at(4*time.Second))
	// The kubelet starts it again; it crashes again a second later, and
	// is seen running in between.
	id = h.rt.container("sb1", "kube-apiserver", "img", 1, t0.Add(20*time.Second))
	h.rt.state(id, cri.ContainerState_CONTAINER_RUNNING, 0, "")
	none(t, h.at(21*time.Second))
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 1, "Error")
	one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning, "container kube-apiserver exited with code 1 (Error)")

	// A container that stays up is started, its time still the runtime's.
	h = newHarness(t)
	h.f = New(Options{Deadline: deadline, MinRunning: 5 * time.Second}, h.rt, h.clk, nil, h.out.emit, h.obs, nil)
	h.submit(types.OpAdd, 0, apiPod(""))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	h.rt.container("sb1", "kube-apiserver", "img", 0, t0.Add(2*time.Second))
	none(t, h.at(6*time.Second)) // running for 4 s
	one(t, h.at(7*time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml 2.0 s after it was written")
}

// What is seen instead is said: the container exited with its code and
// reason, not created, created but not started, the sandbox not ready.
func TestNotStartedSaysWhatIsSeen(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(r *fakeRuntime)
		want string
	}{
		{"exited", func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
			id := r.container("sb", "kube-apiserver", "img", 3, t0.Add(2*time.Second))
			r.state(id, cri.ContainerState_CONTAINER_EXITED, 1, "Error")
		}, "container kube-apiserver exited with code 1 (Error)"},
		{"not created", func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
		}, "container kube-apiserver not created (its image may not be pulled)"},
		{"created", func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
			id := r.container("sb", "kube-apiserver", "img", 0, t0.Add(2*time.Second))
			r.state(id, cri.ContainerState_CONTAINER_CREATED, 0, "")
		}, "container kube-apiserver created but not started"},
		{"sandbox not ready", func(r *fakeRuntime) {
			r.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), false)
		}, "its sandbox (UID uid-1) is not ready"},
		{"runtime down", func(r *fakeRuntime) {
			r.fail(errors.New("connection refused"))
		}, "the container runtime does not answer (connection refused)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.submit(types.OpAdd, 0, apiPod(""))
			tt.set(h.rt)
			none(t, h.at(time.Minute))
			one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning, tt.want)
		})
	}
}

// Init and completed containers count as done: a container that exited 0
// beside one that runs is a pod that runs.
func TestCompletedContainersCountAsDone(t *testing.T) {
	h := newHarness(t)
	h.submit(types.OpAdd, 0, apiPod("", "kube-apiserver=img", "setup=img"))
	h.rt.sandbox("sb", apiserver, "uid-1", t0.Add(time.Second), true)
	h.rt.container("sb", "kube-apiserver", "img", 0, t0.Add(2*time.Second))
	id := h.rt.container("sb", "setup", "img", 0, t0.Add(3*time.Second))
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 0, "Completed")
	one(t, h.at(5*time.Second), types.ReasonStarted, v1.EventTypeNormal, "3.0 s after")
}

// A newer change before the first one ran: only the newest is followed,
// and a sandbox the kubelet made before it does not count for it.
func TestSupersededChange(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("old", apiserver, "uid-old", t0.Add(-time.Hour), true)
	h.submit(types.OpUpdate, 0, apiPod(""))
	none(t, h.at(time.Second))
	// The kubelet starts the first change's pod, then the file changes
	// again before podwatch polls.
	h.rt.sandbox("first", apiserver, "uid-first", t0.Add(5*time.Second), true)
	h.submit(types.OpUpdate, 10*time.Second, apiPod(""))
	h.rt.container("first", "kube-apiserver", "img", 0, t0.Add(11*time.Second))
	none(t, h.at(12*time.Second)) // the first change's pod does not run the second
	none(t, h.at(deadline+time.Second))
	h.rt.setSandboxReady("first", false)
	h.rt.sandbox("second", apiserver, "uid-second", t0.Add(20*time.Second), true)
	h.rt.container("second", "kube-apiserver", "img", 0, t0.Add(21*time.Second))
	// Past the first change's deadline, before the second's: no warning,
	// and the start is timed from the second change.
	one(t, h.at(deadline+5*time.Second), types.ReasonStarted, v1.EventTypeNormal, "11.0 s after it was written")
}

func TestRemoveStops(t *testing.T) {
	h := newHarness(t, "kube-system/"+apiserver)
	h.rt.sandbox("sb", apiserver, "uid-1", t0.Add(-time.Hour), true)
	id := h.rt.container("sb", "kube-apiserver", "img", 0, t0.Add(-time.Hour))
	none(t, h.at(0))
	h.submit(types.OpRemove, 0, nil)
	none(t, h.at(time.Second))
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 0, "")
	none(t, h.at(2*time.Second)) // the sandbox is still ready
	h.rt.setSandboxReady("sb", false)
	one(t, h.at(3500*time.Millisecond), types.ReasonStopped, v1.EventTypeNormal,
		"kube-apiserver-node-1 is stopped 3.5 s after the change to kube-apiserver.yaml that removed it")
	none(t, h.at(deadline))
}

func TestRemoveNotStopped(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("sb", apiserver, "uid-1", t0.Add(-time.Hour), true)
	h.rt.container("sb", "kube-apiserver", "img", 0, t0.Add(-time.Hour))
	h.submit(types.OpRemove, 0, nil)
	none(t, h.at(deadline-time.Second))
	one(t, h.at(deadline), types.ReasonNotStopped, v1.EventTypeWarning,
		"still runs 3m0s after the change to kube-apiserver.yaml that removed it", "its sandbox (UID uid-1) is ready", "container kube-apiserver runs")
}

// A REMOVE the kubelet may not make (a relist that may have fallen within a
// short invalid span) is followed, but its not being done is no
// NotStopped: the pod may rightly run on.
func TestMaySkipIsNotJudged(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("sb", apiserver, "uid-1", t0.Add(-time.Hour), true)
	h.rt.container("sb", "kube-apiserver", "img", 0, t0.Add(-time.Hour))
	h.f.Submit([]types.Change{{
		Op: types.OpRemove, Reason: "x", Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
		File: "kube-apiserver.yaml", At: t0, MaySkip: true,
	}})
	none(t, h.at(deadline))
	none(t, h.at(2*deadline))
}

// A container of a static pod restarting with no change is a Warning with
// the last exit code; one restarted by a followed change is not.
func TestRestartWithoutAChange(t *testing.T) {
	h := newHarness(t, "kube-system/"+apiserver)
	h.rt.sandbox("sb", apiserver, "uid-1", t0.Add(-time.Hour), true)
	id := h.rt.container("sb", "kube-apiserver", "img", 0, t0.Add(-time.Hour))
	none(t, h.at(0)) // the first poll learns what runs
	none(t, h.at(10*time.Second))
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 137, "OOMKilled")
	h.rt.container("sb", "kube-apiserver", "img", 1, t0.Add(15*time.Second))
	one(t, h.at(20*time.Second), types.ReasonRestarting, v1.EventTypeWarning,
		"container kube-apiserver of kube-apiserver-node-1 (UID uid-1) restarted with no manifest change; it exited with code 137 (OOMKilled)")
	none(t, h.at(30*time.Second))

	// A pod podwatch does not know and the runtime does not mark as a
	// static pod's is none of its business.
	h.rt.sandbox("other", "web-1", "uid-web", t0, true)
	h.rt.container("other", "web", "img", 0, t0)
	none(t, h.at(40*time.Second))
	h.rt.container("other", "web", "img", 1, t0.Add(45*time.Second))
	none(t, h.at(50*time.Second))
}

func TestInPlaceUpdate(t *testing.T) {
	const uid = "pinned-uid"
	h := newHarness(t, "kube-system/"+apiserver)
	h.rt.sandbox("sb", apiserver, uid, t0.Add(-time.Hour), true)
	old := h.rt.container("sb", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.1", 0, t0.Add(-time.Hour))
	h.rt.container("sb", "sidecar", "busybox:1", 0, t0.Add(-time.Hour))
	none(t, h.at(0))
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=registry.k8s.io/kube-apiserver:v1.37.2", "sidecar=busybox:1"))
	// The sandbox is the same and ready, but the changed container is not
	// new yet.
	none(t, h.at(2*time.Second))
	h.rt.state(old, cri.ContainerState_CONTAINER_EXITED, 0, "")
	h.rt.container("sb", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 1, t0.Add(4*time.Second))
	// Started, timed to the new container, and not a restart without a
	// change.
	one(t, h.at(5*time.Second), types.ReasonStarted, v1.EventTypeNormal, "3.0 s after it was written")
	none(t, h.at(10*time.Second))

	// The same, not restarted by the deadline.
	h.submit(types.OpUpdate, 20*time.Second, apiPod(uid, "kube-apiserver=registry.k8s.io/kube-apiserver:v1.37.3", "sidecar=busybox:1"))
	none(t, h.at(21*time.Second))
	one(t, h.at(20*time.Second+deadline), types.ReasonNotStarted, v1.EventTypeWarning, "container kube-apiserver not restarted with its new image")
}

// An in-place update that changes no image restarts nothing: not followed.
func TestInPlaceUpdateThatRestartsNothing(t *testing.T) {
	const uid = "pinned-uid"
	h := newHarness(t)
	h.rt.sandbox("sb", apiserver, uid, t0.Add(-time.Hour), true)
	h.rt.container("sb", "kube-apiserver", "img:1", 0, t0.Add(-time.Hour))
	h.submit(types.OpUpdate, 0, apiPod(uid, "kube-apiserver=img:1"))
	none(t, h.at(time.Second))
	if len(h.f.targets) != 0 {
		t.Fatalf("still following %v", h.f.targets)
	}
	none(t, h.at(deadline))
}

// Problems and changes to other kinds are not followed.
func TestSubmitTakesPodChangesOnly(t *testing.T) {
	h := newHarness(t)
	h.f.Submit([]types.Change{
		{Reason: types.ReasonInvalid, Object: types.Object{Kind: types.KindNode, Name: "node-1"}},
		{Reason: types.ReasonDuplicate, Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver}},
	})
	select {
	case <-h.f.wake:
		t.Fatal("problems woke the follower")
	default:
	}
	h.f.take()
	if len(h.f.targets) != 0 {
		t.Fatalf("following %v", h.f.targets)
	}
}

// The follower's Runtime must never grow a call that changes what the
// runtime runs: the socket is root-equivalent.
func TestRuntimeHoldsOnlyReadCalls(t *testing.T) {
	typ := reflect.TypeFor[Runtime]()
	var got []string
	for i := range typ.NumMethod() {
		got = append(got, typ.Method(i).Name)
	}
	if want := []string{"ContainerStatus", "ListContainers", "ListPodSandbox"}; !slices.Equal(got, want) {
		t.Fatalf("Runtime has %v, want %v", got, want)
	}
}

func TestOptions(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{}, ""},
		{Options{Deadline: -time.Second}, "--follow-deadline must not be negative"},
		{Options{PollInterval: time.Minute, IdlePollInterval: 10 * time.Second}, "--follow-poll-interval 1m0s is longer than --follow-idle-poll-interval 10s"},
		{Options{PollInterval: 5 * time.Second, IdlePollInterval: time.Hour, Deadline: time.Second}, "longer than --follow-deadline"},
		{Options{MinRunning: -time.Second}, "--follow-min-running must not be negative"},
		{Options{MinRunning: time.Minute, Deadline: time.Minute}, "--follow-min-running 1m0s is not shorter than --follow-deadline 1m0s"},
	} {
		err := tt.o.Validate()
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.o, err, tt.want)
		}
	}
	if d := (Options{}).withDefaults(); d.Deadline != DefaultDeadline || d.PollInterval != DefaultPollInterval || d.IdlePollInterval != DefaultIdlePollInterval {
		t.Errorf("defaults %+v", d)
	}
}

// A change made at a relist podwatch saw is dated by its read of the
// relist's folder open, a little late: the kubelet, which acted on the
// relist at once, may have created the new pod's sandbox just before that
// date. That sandbox is the change running; one made longer before, or
// for a change made on the watch, is not.
func TestUpdateAtARelistSeenLateCountsTheSandboxJustBefore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		claim   *types.Claim
		created time.Duration
		started bool
	}{
		{"at a relist seen", &types.Claim{Op: types.OpUpdate, At: types.ClaimAtRelist}, -20 * time.Millisecond, true},
		{"at a relist seen, long before", &types.Claim{Op: types.OpUpdate, At: types.ClaimAtRelist}, -600 * time.Millisecond, false},
		{"at a relist estimated", &types.Claim{Op: types.OpUpdate, At: types.ClaimAtRelist, Estimate: true}, -20 * time.Millisecond, false},
		{"on the watch", &types.Claim{Op: types.OpUpdate, At: types.ClaimAtWatch}, -20 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.rt.sandbox("old", apiserver, "uid-old", t0.Add(-time.Hour), false)
			h.f.Submit([]types.Change{{
				Op: types.OpUpdate, Reason: "x", Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
				File: "kube-apiserver.yaml", Pod: apiPod(""), At: t0, Claim: tc.claim,
			}})
			h.rt.sandbox("new", apiserver, "uid-new", t0.Add(tc.created), true)
			h.rt.container("new", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(tc.created+time.Millisecond))
			got := h.at(time.Second)
			if tc.started {
				one(t, got, types.ReasonStarted, v1.EventTypeNormal)
			} else {
				none(t, got)
			}
		})
	}
}

// A change made at a relist podwatch did not see is dated by podwatch's
// own relist, which may come long after the kubelet's: emacs' backup
// taking over at the kubelet's first relist, before podwatch knows its
// phase. A sandbox created since the pod's change before, whose
// containers run this change's images, is then its answer; one from
// before that change, or running another image, is an old pod's.
func TestUpdateAtAnEstimatedRelistCountsASandboxSinceTheChangeBefore(t *testing.T) {
	const image = "registry.k8s.io/kube-apiserver:v1.37.2"
	for _, tc := range []struct {
		name    string
		created time.Duration // from the change before
		image   string
		started bool
	}{
		{"since the change before, its image", 1500 * time.Millisecond, image, true},
		{"before the change before", -time.Second, image, false},
		{"since the change before, another image", 1500 * time.Millisecond, "registry.k8s.io/kube-apiserver:v1.37.1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.rt.sandbox("old", apiserver, "uid-old", t0.Add(-time.Hour), false)
			h.submit(types.OpUpdate, 0, apiPod("", "kube-apiserver=registry.k8s.io/kube-apiserver:v1.37.1"))
			none(t, h.at(100*time.Millisecond))
			h.f.Submit([]types.Change{{
				Op: types.OpUpdate, Reason: "x", Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
				File: "kube-apiserver.yaml~", Pod: apiPod(""), At: t0.Add(2 * time.Second),
				Claim: &types.Claim{Op: types.OpUpdate, At: types.ClaimAtRelist, Estimate: true},
			}})
			h.rt.sandbox("new", apiserver, "uid-new", t0.Add(tc.created), true)
			h.rt.container("new", "kube-apiserver", tc.image, 0, t0.Add(tc.created+time.Millisecond))
			got := h.at(3 * time.Second)
			if tc.started {
				one(t, got, types.ReasonStarted, v1.EventTypeNormal)
			} else {
				none(t, got)
			}
		})
	}
}
