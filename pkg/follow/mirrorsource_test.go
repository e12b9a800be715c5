package follow

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// newMirrorSourceHarness is a follower with no runtime, reading the mirror
// pods m holds; the runtime of the harness is not read.
func newMirrorSourceHarness(t *testing.T, opts Options, known ...string) (*harness, *fakeMirrors) {
	h := &harness{t: t, clk: testingclock.NewFakeClock(t0), out: &emitted{}, obs: &observations{}}
	m := &fakeMirrors{pods: map[string]*v1.Pod{}}
	h.f = NewFromMirrorPods(opts, m, h.clk, nil, h.out.emit, h.obs, known)
	return h, m
}

const apiKey = "kube-system/" + apiserver

// mirror is kube-apiserver's mirror pod as the kubelet keeps it: hash in
// its annotations, created and started at the times given (from t0),
// ready to start containers, and the given container statuses.
func mirror(hash string, created, started time.Duration, statuses ...v1.ContainerStatus) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: apiserver, Namespace: "kube-system", UID: ktypes.UID("obj-" + hash),
			CreationTimestamp: metav1.NewTime(t0.Add(created).Truncate(time.Second)),
			Annotations:       map[string]string{annotationMirror: hash, "kubernetes.io/config.hash": hash, annotationSource: "file"},
		},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "kube-apiserver"}}},
		Status: v1.PodStatus{
			Phase:             v1.PodRunning,
			StartTime:         ptr(metav1.NewTime(t0.Add(started).Truncate(time.Second))),
			Conditions:        []v1.PodCondition{{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue}},
			ContainerStatuses: statuses,
		},
	}
}

func ptr[T any](v T) *T { return &v }

// running is a container status running since t0+at, after restarts.
func running(id string, at time.Duration, restarts int32) v1.ContainerStatus {
	return v1.ContainerStatus{
		Name: "kube-apiserver", ContainerID: "containerd://" + id, RestartCount: restarts, Ready: true,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(at).Truncate(time.Second))}},
	}
}

func (m *fakeMirrors) put(key string, p *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p == nil {
		delete(m.pods, key)
		return
	}
	m.pods[key] = p
}

func (m *fakeMirrors) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
}

func (m *fakeMirrors) takeReads() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.reads
	m.reads = nil
	return r
}

// An edit that gives the pod a new UID: the old mirror pod, even once the
// kubelet writes the new pod's status into it, does not start the change;
// the new mirror pod with its hash and running containers does, timed to
// the later of its creation and its start.
func TestMirrorSourceStartsOnTheNewHash(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline}, apiKey)
	m.put(apiKey, mirror("old", -time.Hour, -time.Hour, running("c1", -time.Hour, 0)))
	none(t, h.at(0))
	h.submit(types.OpUpdate, 1500*time.Millisecond, apiPod(""))
	none(t, h.at(2*time.Second))
	// The status of the new pod, in the old mirror pod.
	m.put(apiKey, mirror("old", -time.Hour, 3*time.Second, running("c2", 3*time.Second, 0)))
	none(t, h.at(4*time.Second))
	// The new mirror pod, created while its container is still starting.
	m.put(apiKey, mirror("new", 14*time.Second, 3*time.Second, v1.ContainerStatus{
		Name: "kube-apiserver", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}))
	none(t, h.at(15*time.Second))
	m.put(apiKey, mirror("new", 14*time.Second, 3*time.Second, running("c2", 15*time.Second, 0)))
	// Created in second 14, started in 15: taken as 15.999999999 s.
	one(t, h.at(16*time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml 14.5 s after it was written")
}

// A mirror pod started in the very second of the change counts as after
// it, though its whole-second time is earlier.
func TestMirrorSourceStartsInTheSecondOfTheChange(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline}, apiKey)
	m.put(apiKey, mirror("old", -time.Hour, -time.Hour, running("c1", -time.Hour, 0)))
	none(t, h.at(0))
	h.submit(types.OpUpdate, 1900*time.Millisecond, apiPod(""))
	m.put(apiKey, mirror("new", 1950*time.Millisecond, 1950*time.Millisecond, running("c2", 1950*time.Millisecond, 0)))
	one(t, h.at(3*time.Second), types.ReasonStarted, v1.EventTypeNormal, "0.1 s after")
}

// --follow-min-running holds for the mirror pod's containers too: one
// seen running, then restarting, did not start the pod.
func TestMirrorSourceMinRunning(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline, MinRunning: 5 * time.Second})
	h.submit(types.OpAdd, 0, apiPod(""))
	m.put(apiKey, mirror("uid-1", time.Second, time.Second, running("c1", 2*time.Second, 0)))
	none(t, h.at(3*time.Second))
	none(t, h.at(6*time.Second))
	one(t, h.at(8*time.Second), types.ReasonStarted, v1.EventTypeNormal, "3.0 s after")
}

// A readiness probe the kubelet has not seen pass keeps the pod from
// counting as started.
func TestMirrorSourceWaitsForReadiness(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline})
	h.submit(types.OpAdd, 0, apiPod(""))
	p := mirror("uid-1", time.Second, time.Second, running("c1", time.Second, 0))
	p.Spec.Containers[0].ReadinessProbe = &v1.Probe{}
	p.Status.ContainerStatuses[0].Ready = false
	m.put(apiKey, p)
	none(t, h.at(3*time.Second))
	p = p.DeepCopy()
	p.Status.ContainerStatuses[0].Ready = true
	m.put(apiKey, p)
	one(t, h.at(4*time.Second), types.ReasonStarted, v1.EventTypeNormal)
}

// Past the deadline, what the status shows: the exit code and reason of
// a container in a crash loop and its termination message, redacted; an
// image not pulled; no mirror pod of the new config at all.
func TestMirrorSourceNotStartedSaysWhatTheStatusShows(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline})
	h.submit(types.OpAdd, 0, podWithEnv(t, "published-secret-value"))
	one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning, "no mirror pod created since the change")
	m.put(apiKey, mirror("uid-1", time.Minute, time.Minute, v1.ContainerStatus{
		Name: "kube-apiserver", RestartCount: 4,
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", ContainerID: "containerd://c4", StartedAt: metav1.NewTime(t0.Add(2 * time.Minute)),
			Message: "token published-secret-value rejected",
		}},
	}))
	ch := one(t, h.at(2*deadline), types.ReasonNotStarted, v1.EventTypeWarning,
		`container kube-apiserver exited with code 1 (Error); the mirror pod's status: container kube-apiserver waiting: CrashLoopBackOff, last terminated with exit code 1 (Error): "token <redacted> rejected"`)
	if strings.Contains(ch.Message, "published-secret-value") {
		t.Errorf("message %q holds the secret", ch.Message)
	}
	// The explanation is the poll's read: one get for the poll, none more.
	if r := m.takeReads(); len(r) != 2 {
		t.Errorf("two polls read %v, want one get each", r)
	}
	m.put(apiKey, mirror("uid-1", time.Minute, time.Minute, v1.ContainerStatus{
		Name: "kube-apiserver", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}},
	}))
	one(t, h.at(3*deadline), types.ReasonNotStarted, v1.EventTypeWarning,
		"container kube-apiserver not created (its image may not be pulled); the mirror pod's status: container kube-apiserver waiting: ImagePullBackOff: not found")
}

// A removed pod is stopped when its mirror pod is gone, or shows no
// running container; not while a container runs.
func TestMirrorSourceStopped(t *testing.T) {
	for _, tc := range []struct {
		name string
		then *v1.Pod
	}{
		{"gone", nil},
		{"terminal", func() *v1.Pod {
			p := mirror("uid-1", -time.Hour, -time.Hour, v1.ContainerStatus{Name: "kube-apiserver", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, ContainerID: "containerd://c1"}}})
			p.Status.Phase = v1.PodSucceeded
			return p
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, m := newMirrorSourceHarness(t, Options{Deadline: deadline}, apiKey)
			m.put(apiKey, mirror("uid-1", -time.Hour, -time.Hour, running("c1", -time.Hour, 0)))
			none(t, h.at(0))
			h.submit(types.OpRemove, time.Second, nil)
			none(t, h.at(2*time.Second))
			m.put(apiKey, tc.then)
			one(t, h.at(4*time.Second), types.ReasonStopped, v1.EventTypeNormal, "stopped 3.0 s after")
		})
	}
}

func TestMirrorSourceNotStopped(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline}, apiKey)
	m.put(apiKey, mirror("uid-1", -time.Hour, -time.Hour, running("c1", -time.Hour, 0)))
	h.submit(types.OpRemove, 0, nil)
	one(t, h.at(deadline), types.ReasonNotStopped, v1.EventTypeWarning, "its mirror pod (UID uid-1) is ready; container kube-apiserver runs")
}

// A restart count that rises with no change is a restart, read at the
// idle rate: one get of each static pod per IdlePollInterval, however
// often a change to another pod is polled.
func TestMirrorSourceRestartAtTheIdleRate(t *testing.T) {
	const other = "kube-system/etcd-node-1"
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline, IdlePollInterval: 10 * time.Second}, apiKey)
	m.put(apiKey, mirror("uid-1", -time.Hour, -time.Hour, running("c1", -time.Hour, 0)))
	none(t, h.at(0))
	if r := m.takeReads(); !slices.Equal(r, []string{apiKey}) {
		t.Fatalf("first poll read %v", r)
	}
	// A change to another pod is polled every second; kube-apiserver is
	// not read again before its idle interval.
	h.f.Submit([]types.Change{{Op: types.OpAdd, Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: "etcd-node-1"}, File: "etcd.yaml", At: t0.Add(time.Second)}})
	p := mirror("uid-1", -time.Hour, -time.Hour, running("c2", 5*time.Second, 1))
	p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", ContainerID: "containerd://c1", Message: "killed"}
	m.put(apiKey, p)
	for s := 2; s < 10; s++ {
		none(t, h.at(time.Duration(s)*time.Second))
	}
	if r := m.takeReads(); len(r) != 8 || slices.Contains(r, apiKey) || r[0] != other {
		t.Fatalf("polls within the idle interval read %v, want %s only", r, other)
	}
	chs := h.at(10 * time.Second)
	one(t, chs, types.ReasonRestarting, v1.EventTypeWarning,
		"container kube-apiserver of "+apiserver+" (UID uid-1) restarted with no manifest change; it exited with code 137 (OOMKilled); its termination message: \"killed\"")
	if r := m.takeReads(); !slices.Equal(r, []string{other, apiKey}) {
		t.Fatalf("the idle poll read %v", r)
	}
	// The same count again is no restart.
	none(t, h.at(20*time.Second))
}

// With the API server down, the warning says so, and the poll's error is
// observed; it recovers when the API answers.
func TestMirrorSourceAPIDown(t *testing.T) {
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline})
	h.submit(types.OpAdd, 0, apiPod(""))
	m.fail(errors.New("connection refused"))
	one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning, "the API server (mirror pods) does not answer", "connection refused")
	if o := h.obs.last(t); o.RuntimeErr == nil {
		t.Error("the poll's error was not observed")
	}
	m.fail(nil)
	m.put(apiKey, mirror("uid-1", time.Minute, time.Minute, running("c1", time.Minute, 0)))
	one(t, h.at(deadline+time.Second), types.ReasonStarted, v1.EventTypeNormal)
}

// An in-place update (metadata.uid pinned) keeps the mirror pod, its hash
// and its UID: the container running from before the change is not the
// change, though it runs; the one the kubelet starts anew after it is.
func TestMirrorSourceInPlaceWaitsForANewContainer(t *testing.T) {
	const uid = "pinned-uid"
	h, m := newMirrorSourceHarness(t, Options{Deadline: deadline}, apiKey)
	m.put(apiKey, mirror(uid, -time.Hour, -time.Hour, running("c1", -time.Hour, 0)))
	none(t, h.at(0))
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=registry.k8s.io/kube-apiserver:v1.37.3"))
	none(t, h.at(2*time.Second))
	none(t, h.at(3*time.Second))
	m.put(apiKey, mirror(uid, -time.Hour, -time.Hour, running("c2", 4*time.Second, 1)))
	one(t, h.at(5*time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change")
}
