package follow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// fakeMirrors is a MirrorPods whose pods and error a test sets; it
// records each read and the deadline it was given.
type fakeMirrors struct {
	mu        sync.Mutex
	pods      map[string]*v1.Pod // by namespace/name
	err       error
	reads     []string
	deadlines []time.Duration // from the read to its context's deadline
}

func (m *fakeMirrors) MirrorPod(ctx context.Context, ns, name string) (*v1.Pod, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads = append(m.reads, ns+"/"+name)
	if d, ok := ctx.Deadline(); ok {
		m.deadlines = append(m.deadlines, time.Until(d))
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.pods[ns+"/"+name].DeepCopy(), nil
}

func (m *fakeMirrors) set(uid string, statuses ...v1.ContainerStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pods = map[string]*v1.Pod{"kube-system/" + apiserver: {
		ObjectMeta: metav1.ObjectMeta{Name: apiserver, Namespace: "kube-system", Annotations: map[string]string{annotationMirror: uid}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "kube-apiserver", Env: []v1.EnvVar{{Name: "MIRROR", Value: "mirror-secret-value"}}}}},
		Status:     v1.PodStatus{ContainerStatuses: statuses},
	}}
}

func (m *fakeMirrors) readCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reads)
}

func newMirrorHarness(t *testing.T, known ...string) (*harness, *fakeMirrors) {
	h := newHarness(t, known...)
	m := &fakeMirrors{}
	h.f.WithMirrorPods(m)
	return h, m
}

// podWithEnv is a published kube-apiserver pod whose container has env
// NAME=value, in its JSON as pkg/manifest keeps it.
func podWithEnv(t *testing.T, value string) *types.Pod {
	t.Helper()
	b, err := json.Marshal(&v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "kube-apiserver", Image: "registry.k8s.io/kube-apiserver:v1.37.2",
		Env: []v1.EnvVar{{Name: "TOKEN", Value: value}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	p := apiPod("")
	p.JSON = b
	return p
}

// An image that cannot be pulled: the runtime shows a sandbox and no
// container; the mirror pod says why, and is read only for the warning.
func TestNotStartedSaysWhyTheImageIsNotPulled(t *testing.T) {
	h, m := newMirrorHarness(t)
	h.submit(types.OpAdd, 0, apiPod(""))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	m.set("uid-1", v1.ContainerStatus{Name: "kube-apiserver", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
		Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.k8s.io/kube-apiserver:v1.37.2": ErrImagePull: not found`,
	}}})
	none(t, h.at(2*time.Second))
	none(t, h.at(deadline-time.Second))
	if n := m.readCount(); n != 0 {
		t.Fatalf("the mirror pod was read %d times before anything needed explaining", n)
	}
	first := one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning,
		"container kube-apiserver not created (its image may not be pulled); the mirror pod's status: container kube-apiserver waiting: ImagePullBackOff: Back-off pulling image \"registry.k8s.io/kube-apiserver:v1.37.2\": ErrImagePull: not found")
	if n := m.readCount(); n != 1 {
		t.Fatalf("the mirror pod was read %d times for one warning, want 1", n)
	}
	for _, d := range m.deadlines {
		if d <= 0 || d > mirrorTimeout {
			t.Errorf("a mirror pod read had %v until its deadline, want at most %v", d, mirrorTimeout)
		}
	}
	// The repeat, with the same status, reads the same.
	again := one(t, h.at(2*deadline), types.ReasonNotStarted, v1.EventTypeWarning)
	if again.Message != first.Message {
		t.Errorf("repeat %q differs from %q", again.Message, first.Message)
	}
}

// A crash loop: the runtime has the exit code; the mirror pod adds the
// waiting reason and the termination message, on one line, bounded, with
// the pod's values redacted, and not CrashLoopBackOff's growing back-off.
func TestNotStartedSaysTheTerminationMessageRedacted(t *testing.T) {
	h, m := newMirrorHarness(t)
	h.submit(types.OpAdd, 0, podWithEnv(t, "published-secret-value"))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	id := h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 3, t0.Add(40*time.Second))
	h.rt.state(id, cri.ContainerState_CONTAINER_EXITED, 1, "Error")
	long := strings.Repeat("é", 300)
	m.set("uid-1", v1.ContainerStatus{
		Name:  "kube-apiserver",
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=kube-apiserver"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", ContainerID: "fake://" + id,
			Message: "open /etc/kubernetes/pki/sa.key: no such file\ntoken published-secret-value rejected, mirror-secret-value too\n" + long,
		}},
	})
	ch := one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning,
		"container kube-apiserver exited with code 1 (Error); the mirror pod's status: container kube-apiserver waiting: CrashLoopBackOff, last terminated with exit code 1 (Error): \"open /etc/kubernetes/pki/sa.key: no such file token <redacted> rejected, <redacted> too é",
		"…\"")
	for _, leak := range []string{"published-secret-value", "mirror-secret-value", "back-off", "\n"} {
		if strings.Contains(ch.Message, leak) {
			t.Errorf("message %q holds %q", ch.Message, leak)
		}
	}
	if n := strings.Count(ch.Message, "é"); n == 0 || n > maxStatusText/2 {
		t.Errorf("the termination message is cut to %d of its 300 runes, want at most %d bytes of it", n, maxStatusText)
	}
}

// A mirror pod with another UID is the old pod's (or one not recreated
// yet): its status is not the new pod's and is not said.
func TestNotStartedLeavesOutAnOldPodsMirror(t *testing.T) {
	h, m := newMirrorHarness(t)
	h.submit(types.OpAdd, 0, apiPod(""))
	h.rt.sandbox("sb1", apiserver, "uid-new", t0.Add(time.Second), true)
	m.set("uid-old", v1.ContainerStatus{Name: "kube-apiserver", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull"}}})
	ch := one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning, "container kube-apiserver not created")
	if strings.Contains(ch.Message, "mirror") || strings.Contains(ch.Message, "ErrImagePull") {
		t.Errorf("the old pod's status is said of the new one: %q", ch.Message)
	}
	// No mirror pod at all: nothing said either.
	m.mu.Lock()
	m.pods = nil
	m.mu.Unlock()
	ch = one(t, h.at(2*deadline), types.ReasonNotStarted, v1.EventTypeWarning)
	if strings.Contains(ch.Message, "mirror") {
		t.Errorf("no mirror pod, and the message says %q", ch.Message)
	}
}

// An API server that fails a read: the runtime's verdict goes out at its
// time with "the mirror pod could not be read", and for mirrorRetry no
// other pod's verdict waits for the API server.
func TestNotStartedWhenTheMirrorPodCannotBeRead(t *testing.T) {
	h, m := newMirrorHarness(t)
	m.err = errors.New("the API server does not answer")
	h.submit(types.OpAdd, 0, apiPod(""))
	other := apiPod("")
	other.Key = "kube-system/etcd-node-1"
	h.f.Submit([]types.Change{{Op: types.OpAdd, Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: "etcd-node-1"}, File: "etcd.yaml", Pod: other, At: t0}})
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	h.rt.sandbox("sb2", "etcd-node-1", "uid-2", t0.Add(time.Second), true)
	chs := h.at(deadline)
	if len(chs) != 2 {
		t.Fatalf("reported %+v, want both pods' StaticPodNotStarted", chs)
	}
	for _, ch := range chs {
		if ch.Reason != types.ReasonNotStarted || !strings.HasSuffix(ch.Message, "not created (its image may not be pulled); the mirror pod could not be read") {
			t.Errorf("reported %s %q", ch.Reason, ch.Message)
		}
	}
	if n := m.readCount(); n != 1 {
		t.Errorf("%d mirror pod reads in one poll after a failure, want 1", n)
	}
	// Past mirrorRetry it is read again, and answers.
	m.mu.Lock()
	m.err = nil
	m.mu.Unlock()
	m.set("uid-1", v1.ContainerStatus{Name: "kube-apiserver", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}})
	chs = h.at(2 * deadline)
	if len(chs) != 2 {
		t.Fatalf("reported %+v, want both pods' repeats", chs)
	}
	said := chs[0].Message + "\n" + chs[1].Message
	if !strings.Contains(said, "the mirror pod's status: container kube-apiserver waiting: ErrImagePull: not found") || strings.Contains(said, "could not be read") {
		t.Errorf("after the API server answers again the warnings say:\n%s", said)
	}
}

// A container that restarts with no manifest change: its termination
// message, from the mirror pod's status of that very container.
func TestRestartingSaysTheTerminationMessage(t *testing.T) {
	key := "kube-system/" + apiserver
	h, m := newMirrorHarness(t, key)
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(-time.Hour), true)
	c0 := h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(-time.Hour))
	none(t, h.at(0))
	h.rt.state(c0, cri.ContainerState_CONTAINER_EXITED, 2, "Error")
	c1 := h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 1, t0.Add(5*time.Second))
	m.set("uid-1", v1.ContainerStatus{
		Name: "kube-apiserver", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", ContainerID: "fake://" + c0, Message: "etcd unreachable"}},
	})
	one(t, h.at(10*time.Second), types.ReasonRestarting, v1.EventTypeWarning,
		`restarted with no manifest change; it exited with code 2 (Error); its termination message: "etcd unreachable"`)
	// The status lags behind: it is about another container than the one
	// that exited, and is not said.
	h.rt.state(c1, cri.ContainerState_CONTAINER_EXITED, 2, "Error")
	h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 2, t0.Add(15*time.Second))
	ch := one(t, h.at(20*time.Second), types.ReasonRestarting, v1.EventTypeWarning, "it exited with code 2 (Error)")
	if strings.Contains(ch.Message, "termination message") {
		t.Errorf("another container's termination message is said: %q", ch.Message)
	}
}

func TestStatusTextIsOneBoundedLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\n\tb  c\x00d":                     "a b c d",
		"":                                   "",
		strings.Repeat("x", maxStatusText+1): strings.Repeat("x", maxStatusText) + "…",
	} {
		if got := statusText(in); got != want {
			t.Errorf("statusText(%q) = %q, want %q", in, got, want)
		}
	}
}

// A container with a readiness probe runs its change only once the kubelet
// says it is ready, which the mirror pod of the new UID shows: running is
// not enough. Without a mirror pod of that UID the runtime's word stands.
func TestStartedWaitsForReadiness(t *testing.T) {
	h, m := newMirrorHarness(t)
	h.submit(types.OpAdd, 0, apiPod(""))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(2*time.Second))
	m.set("uid-1", v1.ContainerStatus{Name: "kube-apiserver", Ready: false})
	m.pods["kube-system/"+apiserver].Spec.Containers[0].ReadinessProbe = &v1.Probe{}
	none(t, h.at(3*time.Second))
	one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning,
		"container kube-apiserver runs, but the kubelet's readiness probe has not passed (the mirror pod's status)")
	m.pods["kube-system/"+apiserver].Status.ContainerStatuses[0].Ready = true
	one(t, h.at(deadline+time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml 2.0 s after it was written")

	// The mirror pod is an old UID's (the kubelet has not made the new
	// one's yet): not asked, the runtime decides.
	h, m = newMirrorHarness(t)
	h.submit(types.OpAdd, 0, apiPod(""))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(time.Second), true)
	h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 0, t0.Add(2*time.Second))
	m.set("uid-old", v1.ContainerStatus{Name: "kube-apiserver", Ready: false})
	m.pods["kube-system/"+apiserver].Spec.Containers[0].ReadinessProbe = &v1.Probe{}
	one(t, h.at(3*time.Second), types.ReasonStarted, v1.EventTypeNormal)
}
