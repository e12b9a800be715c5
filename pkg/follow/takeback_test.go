package follow

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// The image of the .bak's pod and of the shadowed file's, in the tests of
// a change taken back at a relist podwatch did not see.
const (
	bakImage = "registry.k8s.io/kube-apiserver:v1.37.2"
	webImage = "registry.k8s.io/kube-apiserver:v1.37.1"
)

// submitBack submits an UPDATE back to the .bak, dated by podwatch's own
// relist at t0 (an estimate), with its window: the chmod of the shadowed
// file 20 s before, the .bak's pod run since 40 s before.
func (h *harness) submitBack() {
	h.f.Submit([]types.Change{{
		Op: types.OpUpdate, Reason: "x", Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
		File: "kube-apiserver.yaml.bak", Pod: apiPod(""), At: t0,
		Back: types.TakeBack{Since: t0.Add(-20 * time.Second), Ran: t0.Add(-40 * time.Second)},
	}})
}

// shadowedBefore sets the runtime as it was before the chmod: the shadowed
// file's pod ran first, then the .bak's, started after the kubelet took it
// in, both stopped since.
func (h *harness) shadowedBefore() {
	h.rt.sandbox("web-1", apiserver, "uid-web", t0.Add(-time.Minute), false)
	h.rt.sandbox("bak-1", apiserver, "uid-bak", t0.Add(-39*time.Second), false)
}

// The kubelet's relist came, and the .bak's pod started again, before
// podwatch's own relist dated the change: its sandbox, created within the
// window and with the UID the .bak's pod had before the chmod, is the
// change running, whether or not the shadowed file's pod got to start in
// between. The time runs from the chmod, the earliest the kubelet can have
// acted.
func TestTakenBackBeforeItsEstimate(t *testing.T) {
	for _, watchPodStarted := range []bool{false, true} {
		h := newHarness(t)
		h.shadowedBefore()
		if watchPodStarted {
			h.rt.sandbox("web-2", apiserver, "uid-web", t0.Add(-15*time.Second), false)
		}
		h.rt.sandbox("bak-2", apiserver, "uid-bak", t0.Add(-5*time.Second), true)
		h.rt.container("bak-2", "kube-apiserver", bakImage, 0, t0.Add(-4500*time.Millisecond))
		h.submitBack()
		one(t, h.at(time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml.bak 15.5 s after it was written")
	}
}

// The shadowed file's pod, which the kubelet started on the chmod's watch
// event, is never the change running, whether it was created within the
// window or, the kubelet being slow, after podwatch's estimate: it has
// another UID than the pod taken back. That pod's own start counts.
func TestTakenBackIsNotTheWatchEventsPod(t *testing.T) {
	for _, created := range []time.Duration{-15 * time.Second, 2 * time.Second} {
		h := newHarness(t)
		h.shadowedBefore()
		h.submitBack()
		h.rt.sandbox("web-2", apiserver, "uid-web", t0.Add(created), true)
		h.rt.container("web-2", "kube-apiserver", webImage, 0, t0.Add(created+time.Second))
		none(t, h.at(4*time.Second))
		h.rt.setSandboxReady("web-2", false)
		h.rt.sandbox("bak-2", apiserver, "uid-bak", t0.Add(10*time.Second), true)
		h.rt.container("bak-2", "kube-apiserver", bakImage, 0, t0.Add(11*time.Second))
		one(t, h.at(12*time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml.bak 11.0 s after it was written")
	}
}

// When the newest sandbox before the chmod is older than the pod taken
// back, the kubelet may not have started that pod yet when the chmod came
// (a slow stop of the pod before it): a sandbox of the .bak's UID created
// in the window may be that late start, and the shadowed file's pod can
// follow it. Not knowing which UID the relist takes back, the follower
// counts only what comes after the change, and says so at the deadline.
func TestTakenBackUnknownWhenThePodBeforeIsOlder(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("web-1", apiserver, "uid-web", t0.Add(-time.Minute), false)
	h.rt.sandbox("bak-1", apiserver, "uid-bak", t0.Add(-15*time.Second), false)
	h.rt.sandbox("web-2", apiserver, "uid-web", t0.Add(-10*time.Second), true)
	h.rt.container("web-2", "kube-apiserver", webImage, 0, t0.Add(-9*time.Second))
	h.submitBack()
	none(t, h.at(time.Second))
	one(t, h.at(deadline), types.ReasonNotStarted, v1.EventTypeWarning, "no sandbox created since the change")
}

// Through the mirror pods alone the same: the follower keeps the mirror
// pods that others replaced, so it knows the UID the .bak's pod ran under
// before the chmod, and its new mirror pod, created within the window, is
// the change running; the shadowed file's is not.
func TestTakenBackThroughTheMirrorPods(t *testing.T) {
	for _, watchPodLast := range []bool{false, true} {
		h, m := newMirrorSourceHarness(t, Options{Deadline: deadline}, apiKey)
		m.put(apiKey, mirror("web", -time.Minute, -time.Minute, running("c1", -time.Minute, 0)))
		none(t, h.at(-45*time.Second))
		m.put(apiKey, mirror("bak", -38*time.Second, -38*time.Second, running("c2", -37*time.Second, 0)))
		none(t, h.at(-35*time.Second))
		m.put(apiKey, nil) // the chmod: the kubelet stops the .bak's pod
		none(t, h.at(-15*time.Second))
		again := mirror("bak", -5*time.Second, -5*time.Second, running("c3", -4*time.Second, 0))
		again.UID = "obj-bak-2" // a new mirror pod, for the same UID
		m.put(apiKey, again)
		if watchPodLast {
			m.put(apiKey, mirror("web", -3*time.Second, -3*time.Second, running("c4", -2*time.Second, 0)))
		}
		h.submitBack()
		if watchPodLast {
			none(t, h.at(time.Second))
			continue
		}
		// The container's start, in second -4, is taken as its last
		// instant: 17.0 s after the chmod.
		one(t, h.at(time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml.bak 17.0 s after it was written")
	}
}

// A pod taken back at a relist podwatch did not see, displaced again and
// taken back again: podwatch cannot say when the kubelet began to run it
// (no Ran), but the follower found its UID the first time, from the same
// file and content, and the kubelet began to run it again after the first
// watch event: the sandbox before the second must have that UID and be no
// older than that event. A follower that did not find the UID, or whose
// sandbox before the second event is older (the pod never started again
// in between, so a sandbox in the window may be that late start), waits
// for a sandbox after the change.
func TestTakenBackTwiceKnownByTheFirst(t *testing.T) {
	bak := &types.Pod{Key: apiKey, Config: "bak-config", Containers: []string{"kube-apiserver=" + bakImage}}
	back := func(h *harness, at, since, ran time.Duration) {
		b := types.TakeBack{Since: t0.Add(since)}
		if ran != 0 {
			b.Ran = t0.Add(ran)
		}
		h.f.Submit([]types.Change{{
			Op: types.OpUpdate, Reason: "x", Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
			File: "kube-apiserver.yaml.bak", Pod: bak, At: t0.Add(at), Back: b,
		}})
	}
	for _, c := range []struct {
		name             string
		firstSeen, again bool
		want             bool
	}{
		{"known", true, true, true},
		{"first not followed", false, true, false},
		{"not started in between", true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.shadowedBefore()
			if c.firstSeen {
				// Taken back at 0 s; judged before the kubelet starts it.
				back(h, 0, -20*time.Second, -40*time.Second)
				none(t, h.at(500*time.Millisecond))
			}
			if c.again {
				h.rt.sandbox("bak-2", apiserver, "uid-bak", t0.Add(5*time.Second), false)
			}
			// Displaced at 6 s, before that pod was seen to run (the
			// shadowed file's UPDATE), then taken back by the kubelet
			// and started again at 25 s, dated by podwatch at 40 s.
			h.submit(types.OpUpdate, 6*time.Second, apiPod(""))
			none(t, h.at(7*time.Second))
			h.rt.sandbox("bak-3", apiserver, "uid-bak", t0.Add(25*time.Second), true)
			h.rt.container("bak-3", "kube-apiserver", bakImage, 0, t0.Add(26*time.Second))
			back(h, 40*time.Second, 6*time.Second, 0)
			if !c.want {
				none(t, h.at(41*time.Second))
				return
			}
			one(t, h.at(41*time.Second), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml.bak 20.0 s after it was written")
		})
	}
}

// When the .bak was written the shadowed file's own pod may still have
// been starting, its sandbox created after the kubelet began to run the
// .bak's pod: with no older sandbox of another UID before that, the
// follower cannot tell it from the .bak's pod, and the shadowed file's
// pod started again on the chmod's watch event, which has that same UID,
// is never taken for the change.
func TestTakenBackNotThePodStillStarting(t *testing.T) {
	h := newHarness(t)
	h.rt.sandbox("web-1", apiserver, "uid-web", t0.Add(-35*time.Second), false)
	h.rt.sandbox("web-2", apiserver, "uid-web", t0.Add(-10*time.Second), true)
	h.rt.container("web-2", "kube-apiserver", webImage, 0, t0.Add(-9*time.Second))
	h.submitBack()
	none(t, h.at(time.Second))
}
