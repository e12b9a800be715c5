package follow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// fakeRuntime is a Runtime whose sandboxes and containers a test sets.
type fakeRuntime struct {
	mu         sync.Mutex
	sandboxes  []*cri.PodSandbox
	containers []*cri.Container
	exit       map[string]*cri.ContainerStatus // by container ID, for exited ones
	err        error
	lists      int
	// hideUserImage: ListContainers leaves ImageSpec.UserSpecifiedImage
	// empty, as some runtimes do.
	hideUserImage bool
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{exit: map[string]*cri.ContainerStatus{}}
}

func (r *fakeRuntime) ListPodSandbox(context.Context, *cri.PodSandboxFilter) ([]*cri.PodSandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
	if r.err != nil {
		return nil, r.err
	}
	return append([]*cri.PodSandbox(nil), r.sandboxes...), nil
}

func (r *fakeRuntime) ListContainers(context.Context, *cri.ContainerFilter) ([]*cri.Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	if r.hideUserImage {
		out := make([]*cri.Container, 0, len(r.containers))
		for _, c := range r.containers {
			out = append(out, &cri.Container{
				Id: c.Id, PodSandboxId: c.PodSandboxId, CreatedAt: c.CreatedAt, State: c.State, Metadata: c.Metadata,
				Image:  &cri.ImageSpec{Image: c.GetImage().GetImage()},
				Labels: c.Labels, Annotations: c.Annotations,
			})
		}
		return out, nil
	}
	return append([]*cri.Container(nil), r.containers...), nil
}

func (r *fakeRuntime) ContainerStatus(_ context.Context, id string) (*cri.ContainerStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.containers {
		if c.Id != id {
			continue
		}
		st := &cri.ContainerStatus{Id: id, State: c.State}
		if e := r.exit[id]; e != nil {
			st.ExitCode, st.Reason = e.ExitCode, e.Reason
		}
		return st, nil
	}
	return nil, errors.New("container " + id + " not found")
}

// sandbox adds a sandbox with the kubelet's labels for kube-system/name.
func (r *fakeRuntime) sandbox(id, name, uid string, at time.Time, isReady bool) {
	st := cri.PodSandboxState_SANDBOX_NOTREADY
	if isReady {
		st = cri.PodSandboxState_SANDBOX_READY
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sandboxes = append(r.sandboxes, &cri.PodSandbox{
		Id: id, State: st, CreatedAt: at.UnixNano(),
		Metadata: &cri.PodSandboxMetadata{Name: name, Namespace: "kube-system", Uid: uid},
		Labels:   map[string]string{labelPodName: name, labelPodNamespace: "kube-system", labelPodUID: uid},
	})
}

func (r *fakeRuntime) setSandboxReady(id string, isReady bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sb := range r.sandboxes {
		if sb.Id == id {
			sb.State = cri.PodSandboxState_SANDBOX_NOTREADY
			if isReady {
				sb.State = cri.PodSandboxState_SANDBOX_READY
			}
		}
	}
}

// container adds a running container in sandbox sb; its ID says the
// sandbox, name and attempt, as the fake CRI's do, and it carries the
// kubelet's hash of its name and image.
func (r *fakeRuntime) container(sb, name, image string, attempt uint32, at time.Time) string {
	id := fmt.Sprintf("%s_%s_%d", sb, name, attempt)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.containers = append(r.containers, &cri.Container{
		Id: id, PodSandboxId: sb, CreatedAt: at.UnixNano(), State: cri.ContainerState_CONTAINER_RUNNING,
		Metadata:    &cri.ContainerMetadata{Name: name, Attempt: attempt},
		Image:       &cri.ImageSpec{Image: "sha256:0123", UserSpecifiedImage: image},
		Labels:      map[string]string{labelContainerName: name},
		Annotations: map[string]string{annotationHash: ContainerHash(name, image)},
	})
	return id
}

// state sets a container's state, and its exit code when exited.
func (r *fakeRuntime) state(id string, st cri.ContainerState, code int32, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.containers {
		if c.Id == id {
			c.State = st
		}
	}
	if st == cri.ContainerState_CONTAINER_EXITED {
		r.exit[id] = &cri.ContainerStatus{ExitCode: code, Reason: reason}
	}
}

func (r *fakeRuntime) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// emitted collects what a follower reports.
type emitted struct {
	mu  sync.Mutex
	chs []types.Change
	ch  chan types.Change // also sent to, when not nil
}

func (e *emitted) emit(_ context.Context, ch types.Change) {
	e.mu.Lock()
	e.chs = append(e.chs, ch)
	e.mu.Unlock()
	if e.ch != nil {
		e.ch <- ch
	}
}

// take returns what was reported since the last take.
func (e *emitted) take() []types.Change {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.chs
	e.chs = nil
	return out
}

// observations collects what a follower tells its Observer.
type observations struct {
	mu  sync.Mutex
	got []types.FollowObservation
}

func (o *observations) ObserveFollow(obs types.FollowObservation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, obs)
}

// last is the latest observation; it fails the test when there is none.
func (o *observations) last(t *testing.T) types.FollowObservation {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.got) == 0 {
		t.Fatal("nothing observed")
	}
	return o.got[len(o.got)-1]
}
