package follow

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// inPlaceHarness runs pod uid in sandbox sb since an hour, with the
// kube-apiserver container of image, and has polled it once.
func inPlaceHarness(t *testing.T, uid, image string) (*harness, string) {
	t.Helper()
	h := newHarness(t, "kube-system/"+apiserver)
	h.rt.sandbox("sb", apiserver, uid, t0.Add(-time.Hour), true)
	old := h.rt.container("sb", "kube-apiserver", image, 0, t0.Add(-time.Hour))
	none(t, h.at(0))
	return h, old
}

// A runtime that does not give back the image the kubelet asked for:
// the old container, still running, is not the change (it was taken for
// it, and StaticPodStarted claimed at once); the kubelet's new one, with
// the new image's hash, is.
func TestInPlaceUpdateWithoutTheRequestedImage(t *testing.T) {
	const uid = "pinned-uid"
	h, old := inPlaceHarness(t, uid, "registry.k8s.io/kube-apiserver:v1.37.1")
	h.rt.hideUserImage = true
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=registry.k8s.io/kube-apiserver:v1.37.2"))
	none(t, h.at(2*time.Second))
	none(t, h.at(3*time.Second))
	h.rt.state(old, cri.ContainerState_CONTAINER_EXITED, 0, "")
	h.rt.container("sb", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2", 1, t0.Add(4*time.Second))
	one(t, h.at(5*time.Second), types.ReasonStarted, v1.EventTypeNormal, "3.0 s after it was written")
}

// The same runtime, and an update that changes no image: the hash says
// the kubelet restarts nothing, so it is not followed (it was, and
// reported started at once).
func TestInPlaceUpdateWithoutTheRequestedImageThatRestartsNothing(t *testing.T) {
	const uid = "pinned-uid"
	h, _ := inPlaceHarness(t, uid, "img:1")
	h.rt.hideUserImage = true
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=img:1"))
	none(t, h.at(2*time.Second))
	if len(h.f.targets) != 0 {
		t.Fatalf("still following %v", h.f.targets)
	}
}

// A runtime that gives back neither the image nor the hash: every
// container must be new, a late warning rather than a false claim.
func TestInPlaceUpdateWithoutImageOrHash(t *testing.T) {
	const uid = "pinned-uid"
	h, _ := inPlaceHarness(t, uid, "img:1")
	h.rt.hideUserImage = true
	h.rt.mu.Lock()
	h.rt.containers[0].Annotations = nil
	h.rt.mu.Unlock()
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=img:2"))
	none(t, h.at(2*time.Second))
	one(t, h.at(time.Second+deadline), types.ReasonNotStarted, v1.EventTypeWarning, "container kube-apiserver not restarted with its new image")
}

// The old container crashes just as the change comes, and the kubelet
// restarts it with the old image before it acts on the change: created
// after the change, but with the old hash, it is not the change. The one
// with the new image's hash is.
func TestInPlaceUpdateIsNotARestartOfTheOldContainer(t *testing.T) {
	const uid = "pinned-uid"
	h, old := inPlaceHarness(t, uid, "img:1")
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=img:2"))
	h.rt.state(old, cri.ContainerState_CONTAINER_EXITED, 137, "Error")
	crashed := h.rt.container("sb", "kube-apiserver", "img:1", 1, t0.Add(2*time.Second))
	none(t, h.at(3*time.Second))
	none(t, h.at(4*time.Second))
	h.rt.state(crashed, cri.ContainerState_CONTAINER_EXITED, 0, "")
	h.rt.container("sb", "kube-apiserver", "img:2", 2, t0.Add(5*time.Second))
	one(t, h.at(6*time.Second), types.ReasonStarted, v1.EventTypeNormal, "4.0 s after it was written")
}

// A container that ran before the change, listed again with a creation
// time after it (a runtime that restamps on restore), is not new.
func TestInPlaceUpdateIsNotAContainerRecordedBefore(t *testing.T) {
	const uid = "pinned-uid"
	h, old := inPlaceHarness(t, uid, "img:1")
	h.rt.hideUserImage = true
	h.rt.mu.Lock()
	h.rt.containers[0].Annotations = nil // no hash to tell them apart
	h.rt.mu.Unlock()
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=img:2"))
	none(t, h.at(2*time.Second))
	h.rt.mu.Lock()
	h.rt.containers[0].CreatedAt = t0.Add(3 * time.Second).UnixNano()
	h.rt.mu.Unlock()
	none(t, h.at(4*time.Second))
	h.rt.state(old, cri.ContainerState_CONTAINER_EXITED, 0, "")
	h.rt.container("sb", "kube-apiserver", "img:2", 1, t0.Add(5*time.Second))
	one(t, h.at(6*time.Second), types.ReasonStarted, v1.EventTypeNormal)
}

// An in-place update written a moment after the pod started (within
// createdSlack): its sandbox and container, made before podwatch saw the
// change, are the pod being updated, not the kubelet's answer to it. The
// follower waits for the new container and says so, not for a new sandbox
// that never comes.
func TestInPlaceUpdateJustAfterTheStart(t *testing.T) {
	const uid = "pinned-uid"
	h := newHarness(t)
	h.rt.sandbox("sb", apiserver, uid, t0.Add(800*time.Millisecond), true)
	old := h.rt.container("sb", "kube-apiserver", "img:1", 0, t0.Add(800*time.Millisecond))
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=img:2"))
	none(t, h.at(1200*time.Millisecond)) // the old container is not the change
	h.rt.state(old, cri.ContainerState_CONTAINER_EXITED, 0, "")
	h.rt.container("sb", "kube-apiserver", "img:2", 1, t0.Add(1700*time.Millisecond))
	one(t, h.at(2*time.Second), types.ReasonStarted, v1.EventTypeNormal, "0.7 s after it was written")
}

// The same, the kubelet quicker than podwatch: its new container, with the
// new image, was made just before podwatch saw the change, and is the
// change done.
func TestInPlaceUpdateTheKubeletDidFirst(t *testing.T) {
	const uid = "pinned-uid"
	h, old := inPlaceHarness(t, uid, "img:1")
	h.rt.state(old, cri.ContainerState_CONTAINER_EXITED, 0, "")
	h.rt.container("sb", "kube-apiserver", "img:2", 1, t0.Add(800*time.Millisecond))
	h.submit(types.OpUpdate, time.Second, apiPod(uid, "kube-apiserver=img:2"))
	one(t, h.at(1200*time.Millisecond), types.ReasonStarted, v1.EventTypeNormal)
}
