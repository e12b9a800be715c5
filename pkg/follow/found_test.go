package follow

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

const apiImage = "registry.k8s.io/kube-apiserver:v1.37.2"

// submitFound hands over the diff's StaticPodFound of the API server's
// pod, seen by podwatch at t0+at.
func (h *harness) submitFound(at time.Duration) {
	h.f.Submit([]types.Change{{
		Op: types.OpAdd, Reason: types.ReasonFound, Type: "Normal",
		Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
		File:   "kube-apiserver.yaml", Pod: apiPod(""), At: t0.Add(at), ID: "found-id",
		Found: &types.Found{Case: types.FoundUnknown, Head: "kube-apiserver.yaml (" + apiImage + ")"},
	}})
}

// found takes the one StaticPodFound among reports, failing without one.
func found(t *testing.T, reports []types.Change) types.Change {
	t.Helper()
	var out []types.Change
	for _, ch := range reports {
		if ch.Reason == types.ReasonFound {
			out = append(out, ch)
		}
	}
	if len(out) != 1 {
		t.Fatalf("got %d StaticPodFound in %+v, want 1", len(out), reports)
	}
	ch := out[0]
	if ch.Found == nil || ch.ID != "found-id" || ch.Object.Name != apiserver || ch.Message != ch.Found.Message() {
		t.Fatalf("StaticPodFound %+v: want the diff's change, worded from its Found", ch)
	}
	return ch
}

// A pod whose sandbox ran before podwatch started is found running, since
// that sandbox's creation, and not followed further.
func TestFoundRunning(t *testing.T) {
	h := newHarness(t)
	since := t0.Add(-90 * 24 * time.Hour)
	h.rt.sandbox("sb1", apiserver, "uid-1", since, true)
	h.rt.container("sb1", "kube-apiserver", apiImage, 0, since)
	h.submitFound(0)
	ch := found(t, h.at(time.Second))
	if ch.Found.Case != types.FoundRunning || !ch.Found.Since.Equal(since) || ch.Found.UID != "uid-1" {
		t.Fatalf("found %+v, want running since %v with uid-1", ch.Found, since)
	}
	if want := "kube-apiserver.yaml (" + apiImage + "): found running for 90d when podwatch started; UID uid-1"; !strings.HasPrefix(ch.Message, want) || strings.Contains(ch.Message, "starts") {
		t.Errorf("message %q", ch.Message)
	}
	if got := h.at(deadline + time.Minute); len(got) != 0 {
		t.Errorf("a pod found running was followed: %+v", got)
	}
}

// A pod with no sandbox when podwatch started (a boot) is one the kubelet
// starts: a sandbox created after is followed to StaticPodStarted.
func TestFoundBootStartsIt(t *testing.T) {
	h := newHarness(t)
	h.submitFound(0)
	ch := found(t, h.at(time.Second))
	if ch.Found.Case != types.FoundStarting || !strings.Contains(ch.Message, "the kubelet starts the pod") {
		t.Fatalf("found %+v (%q), want the kubelet starting it", ch.Found, ch.Message)
	}
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(3*time.Second), true)
	h.rt.container("sb1", "kube-apiserver", apiImage, 0, t0.Add(4*time.Second))
	got := h.at(time.Minute)
	if len(got) != 1 || got[0].Reason != types.ReasonStarted || !strings.Contains(got[0].Message, "after podwatch found it") {
		t.Fatalf("got %+v, want StaticPodStarted timed from podwatch's start", got)
	}
}

// A sandbox created after podwatch started, already there at its first
// poll, is the boot case too.
func TestFoundSandboxCreatedAfterStart(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(2*time.Second), true)
	h.rt.container("sb1", "kube-apiserver", apiImage, 0, t0.Add(3*time.Second))
	h.submitFound(0)
	ch := found(t, h.at(time.Minute))
	if ch.Found.Case != types.FoundStarting || ch.Found.UID != "uid-1" || !strings.Contains(ch.Message, ": the kubelet starts the pod; its sandbox (UID uid-1, in the container runtime) was created 2s after podwatch started") {
		t.Fatalf("found %+v (%q), want the kubelet starting it", ch.Found, ch.Message)
	}
}

// A sandbox from before the start running another image is restarted
// with this config: said, then followed to the new sandbox.
func TestFoundOtherConfigRestarts(t *testing.T) {
	h := newHarness(t)
	since := t0.Add(-time.Hour)
	h.rt.sandbox("sb1", apiserver, "uid-old", since, true)
	h.rt.container("sb1", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.36.0", 0, since)
	h.submitFound(0)
	ch := found(t, h.at(time.Second))
	if ch.Found.Case != types.FoundRestarting || !strings.Contains(ch.Message, ": the kubelet restarts the pod with this config; ") ||
		!strings.Contains(ch.Message, "v1.36.0") {
		t.Fatalf("found %+v (%q), want a restart with this config", ch.Found, ch.Message)
	}
	h.rt.setSandboxReady("sb1", false)
	h.rt.sandbox("sb2", apiserver, "uid-new", t0.Add(5*time.Second), true)
	h.rt.container("sb2", "kube-apiserver", apiImage, 0, t0.Add(6*time.Second))
	if got := h.at(time.Minute); len(got) != 1 || got[0].Reason != types.ReasonStarted {
		t.Fatalf("got %+v, want StaticPodStarted", got)
	}
}

// A runtime that does not answer by the deadline leaves podwatch unable
// to tell, and it says so, once.
func TestFoundRuntimeDownCannotTell(t *testing.T) {
	h := newHarness(t)
	h.rt.fail(errors.New("connection refused"))
	h.submitFound(0)
	if got := h.at(time.Second); len(got) != 0 {
		t.Fatalf("before the deadline got %+v", got)
	}
	ch := found(t, h.at(deadline))
	if ch.Found.Case != types.FoundUnknown || !strings.Contains(ch.Message, "cannot tell") || !strings.Contains(ch.Message, "connection refused") {
		t.Fatalf("found %+v (%q), want cannot tell", ch.Found, ch.Message)
	}
	if got := h.at(2 * deadline); len(got) != 0 {
		t.Errorf("said again: %+v", got)
	}
}

// A newer change of the pod does not lose the inventory: the pod is still
// found, and the newer change is what is followed.
func TestFoundNotSupersededByNewerChange(t *testing.T) {
	h := newHarness(t)
	since := t0.Add(-time.Hour)
	h.rt.sandbox("sb1", apiserver, "uid-1", since, true)
	h.rt.container("sb1", "kube-apiserver", apiImage, 0, since)
	h.submitFound(0)
	h.submit(types.OpUpdate, 0, apiPod("", "kube-apiserver=registry.k8s.io/kube-apiserver:v1.38.0"))
	ch := found(t, h.at(time.Second))
	if ch.Found.Case != types.FoundRunning {
		t.Fatalf("found %+v, want running", ch.Found)
	}
}

// With the mirror pods alone (no runtime), a mirror pod created before
// podwatch started is found running since its creationTimestamp, and one
// created since says the kubelet starts it; both are read though neither
// pod was known at start.
func TestFoundFromMirrorPods(t *testing.T) {
	for _, tc := range []struct {
		name    string
		created time.Duration
		want    types.FoundCase
		words   string
	}{
		{"running", -48 * time.Hour, types.FoundRunning, ": found running for 2d when podwatch started; "},
		{"boot", 3 * time.Second, types.FoundStarting, ": the kubelet starts the pod; its sandbox (UID hash1, in the API server (mirror pods)) was created 4s after podwatch started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, m := newMirrorSourceHarness(t, Options{Deadline: deadline})
			m.put(apiKey, mirror("hash1", tc.created, tc.created, running("c1", tc.created, 0)))
			h.submitFound(0)
			ch := found(t, h.at(5*time.Second))
			if ch.Found.Case != tc.want || ch.Found.UID != "hash1" || !strings.Contains(ch.Message, tc.words) ||
				!strings.Contains(ch.Message, "mirror pods") {
				t.Fatalf("found %+v (%q), want %s", ch.Found, ch.Message, tc.want)
			}
		})
	}
}
