package follow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/cri"
)

// mirrorSource is the Runtime of a follower with no container runtime to
// read: it shows the mirror pods of the pods followed as the runtime would
// show their pods, so that the same judge rules on both. Each poll reads
// the mirror pod of every pod whose change is followed, and that of every
// other static pod once per IdlePollInterval, one get each (the RBAC is
// get on pods, with no list or watch); the pods not read in a poll are
// shown as last read.
//
// A mirror pod is a sandbox: its UID label is the static pod's UID, the
// kubelet's config hash, which the kubelet writes in the
// kubernetes.io/config.mirror annotation and which changes, with a new
// mirror pod, whenever the static pod gets a new UID. The sandbox was
// created when the mirror pod was, not when the pod's status says it
// started: the kubelet may write a new pod's status into the old mirror
// pod until it replaces it (it maps mirror pods to static pods by name),
// so only a mirror pod created after the change can say the change runs,
// and the time to StaticPodStarted includes the mirror pod's own delay. It
// is ready while the pod is not terminal or being deleted and its
// PodReadyToStartContainers condition holds (or, without one, it is
// Running). Each container status is a container: running (created when
// it started), exited (its own termination, or the last one of a
// container that waits to restart, with its exit code and reason), or
// absent when it waits with no termination yet (not created); its
// attempt is the restart count, which rises exactly when the kubelet
// creates the next container, so a rise is a restart.
//
// The API's times are whole seconds: each is taken as the last instant of
// its second, so that a pod started in the second of the change counts as
// started after it; a time reported may be up to a second long. Where the
// judge needs a sandbox created surely before or after a time (a change
// taken back at a relist, types.TakeBack), the follower's grain allows
// for that second.
//
// A mirror pod replaced by another (a new UID) stays a sandbox, not ready
// and with no container, for as long as the pod is read (the last few):
// a change taken back at a relist is judged by the UID of the pod that
// ran before a watch event replaced it.
//
// The mirror pod holds no container's image as the kubelet was asked for
// it, nor its hash, so the judge takes every container of an in-place
// update (metadata.uid set) as restarted: it is judged started once each
// has started anew after the change. One the update leaves running earns
// a late warning, never an early StaticPodStarted.
type mirrorSource struct {
	pods MirrorPods
	clk  clock.PassiveClock
	idle time.Duration
	log  *slog.Logger

	// Owned by the follower's Run, like the follower's state.
	cache map[string]*mirrorRead // by pod key
	err   error                  // the last refresh's failure
}

// mirrorRead is a pod's mirror pod as last read: nil when there was none.
// before are the mirror pods read earlier that another has replaced since,
// oldest first, at most keepReplaced.
type mirrorRead struct {
	pod    *v1.Pod
	at     time.Time
	before []*v1.Pod
}

// keepReplaced bounds the replaced mirror pods kept per pod: the judge of
// a change taken back at a relist (types.TakeBack) looks for the pod that
// ran before a watch event, which at most the watch event's pod and the
// one taken back have replaced since.
const keepReplaced = 3

// podScoped is a Runtime that reads only the pods it is told of: before
// each poll, the follower tells it which changes it follows and which
// static pods it watches.
type podScoped interface {
	refresh(ctx context.Context, followed, static []string)
}

// scope tells a podScoped runtime which pods to read in this poll.
func (f *Follower) scope(ctx context.Context) {
	s, ok := f.rt.(podScoped)
	if !ok {
		return
	}
	followed := make([]string, 0, len(f.targets)+len(f.found))
	for k := range f.targets {
		followed = append(followed, k)
	}
	for k := range f.found {
		if f.targets[k] == nil {
			followed = append(followed, k)
		}
	}
	static := make([]string, 0, len(f.static))
	for k := range f.static {
		static = append(static, k)
	}
	sort.Strings(followed)
	sort.Strings(static)
	s.refresh(ctx, followed, static)
}

// NewFromMirrorPods builds a follower that reads the pods' mirror pods
// through pods, with no container runtime (see mirrorSource); the
// arguments are New's. It starts nothing until Run.
func NewFromMirrorPods(opts Options, pods MirrorPods, clk clock.WithTicker, log *slog.Logger, emit Emit, obs Observer, known []string) *Follower {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	src := &mirrorSource{pods: pods, clk: clk, idle: opts.withDefaults().IdlePollInterval, log: log, cache: map[string]*mirrorRead{}}
	f := New(opts, src, clk, log, emit, obs, known)
	f.source, f.sandbox = "the API server (mirror pods)", "mirror pod"
	f.grain = time.Second - time.Nanosecond
	return f.WithMirrorPods(src)
}

// refresh reads the mirror pods of the followed keys, and of the static
// ones not read for an idle interval; a failed read fails the poll, and
// the API server is not asked further in it.
func (s *mirrorSource) refresh(ctx context.Context, followed, static []string) {
	now := s.clk.Now()
	s.err = nil
	want := map[string]bool{}
	for _, k := range followed {
		want[k] = true
	}
	for _, k := range static {
		if r := s.cache[k]; r == nil || now.Sub(r.at) >= s.idle {
			want[k] = true
		}
	}
	for k := range s.cache {
		if !slices.Contains(static, k) && !slices.Contains(followed, k) {
			delete(s.cache, k) // neither followed nor static any more
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		pod, err := s.pods.MirrorPod(ctx, ns, name)
		if err != nil {
			s.err = fmt.Errorf("read the mirror pod %s: %w", k, err)
			return
		}
		s.cache[k] = s.cache[k].next(pod, now)
	}
}

// next is the read of pod at now after r (nil: none before): a mirror pod
// that replaces another keeps that one among those replaced.
func (r *mirrorRead) next(pod *v1.Pod, now time.Time) *mirrorRead {
	n := &mirrorRead{pod: pod, at: now}
	if r == nil {
		return n
	}
	n.before = r.before
	if r.pod != nil && (pod == nil || pod.UID != r.pod.UID) {
		n.before = append(slices.Clip(n.before), r.pod)
		if len(n.before) > keepReplaced {
			n.before = n.before[len(n.before)-keepReplaced:]
		}
	}
	return n
}

// MirrorPod serves the follower's explanations from the poll's reads, so
// they cost no further get.
func (s *mirrorSource) MirrorPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if r := s.cache[namespace+"/"+name]; r != nil {
		return r.pod, nil
	}
	return s.pods.MirrorPod(ctx, namespace, name)
}

func (s *mirrorSource) ListPodSandbox(context.Context, *cri.PodSandboxFilter) ([]*cri.PodSandbox, error) {
	if s.err != nil {
		return nil, s.err
	}
	var out []*cri.PodSandbox
	for _, r := range s.cache {
		if r.pod != nil {
			out = append(out, mirrorSandbox(r.pod))
		}
		for _, p := range r.before {
			// Replaced: the kubelet deletes a mirror pod of another UID
			// only once it syncs the new pod, after the old one stopped.
			sb := mirrorSandbox(p)
			sb.State = cri.PodSandboxState_SANDBOX_NOTREADY
			out = append(out, sb)
		}
	}
	return out, nil
}

func (s *mirrorSource) ListContainers(context.Context, *cri.ContainerFilter) ([]*cri.Container, error) {
	if s.err != nil {
		return nil, s.err
	}
	var out []*cri.Container
	for _, r := range s.cache {
		if r.pod != nil {
			out = append(out, mirrorContainers(r.pod)...)
		}
	}
	return out, nil
}

// ContainerStatus says how the container id ended, as the last reads of
// the mirror pods do: its own status, or a later container's last
// termination.
func (s *mirrorSource) ContainerStatus(_ context.Context, id string) (*cri.ContainerStatus, error) {
	for _, r := range s.cache {
		if r.pod == nil {
			continue
		}
		for _, st := range r.pod.Status.ContainerStatuses {
			for _, term := range []*v1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
				if term != nil && sameContainer(term.ContainerID, id) {
					return &cri.ContainerStatus{Id: id, State: cri.ContainerState_CONTAINER_EXITED, ExitCode: term.ExitCode, Reason: term.Reason}, nil
				}
			}
			if st.State.Running != nil && sameContainer(st.ContainerID, id) {
				return &cri.ContainerStatus{Id: id, State: cri.ContainerState_CONTAINER_RUNNING}, nil
			}
		}
	}
	return nil, errors.New("container " + id + " is in no mirror pod's status")
}

// unixNano is the last instant of the second t names, 0 for no time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Truncate(time.Second).Add(time.Second - time.Nanosecond).UnixNano()
}

func mirrorSandbox(p *v1.Pod) *cri.PodSandbox {
	state := cri.PodSandboxState_SANDBOX_NOTREADY
	if mirrorReady(p) {
		state = cri.PodSandboxState_SANDBOX_READY
	}
	uid := p.Annotations[annotationMirror]
	return &cri.PodSandbox{
		Id: mirrorSandboxID(p), State: state, CreatedAt: unixNano(p.CreationTimestamp.Time),
		Metadata:    &cri.PodSandboxMetadata{Name: p.Name, Namespace: p.Namespace, Uid: uid},
		Labels:      map[string]string{labelPodName: p.Name, labelPodNamespace: p.Namespace, labelPodUID: uid},
		Annotations: map[string]string{annotationSource: p.Annotations[annotationSource]},
	}
}

// mirrorSandboxID is the mirror pod's own UID, new with each mirror pod.
func mirrorSandboxID(p *v1.Pod) string { return "mirror-" + string(p.UID) }

func mirrorReady(p *v1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReadyToStartContainers {
			return c.Status == v1.ConditionTrue
		}
	}
	return p.Status.Phase == v1.PodRunning
}

// mirrorContainers are the pod's container statuses as the runtime's
// containers.
func mirrorContainers(p *v1.Pod) []*cri.Container {
	var out []*cri.Container
	for _, st := range p.Status.ContainerStatuses {
		var id string
		var started time.Time
		state := cri.ContainerState_CONTAINER_EXITED
		switch {
		case st.State.Running != nil:
			id, started, state = st.ContainerID, st.State.Running.StartedAt.Time, cri.ContainerState_CONTAINER_RUNNING
		case st.State.Terminated != nil:
			id, started = st.State.Terminated.ContainerID, st.State.Terminated.StartedAt.Time
			if id == "" {
				id = st.ContainerID
			}
		case st.LastTerminationState.Terminated != nil:
			id, started = st.LastTerminationState.Terminated.ContainerID, st.LastTerminationState.Terminated.StartedAt.Time
		default:
			continue // waiting with no container yet: not created
		}
		if _, after, ok := strings.Cut(id, "://"); ok {
			id = after
		}
		if id == "" {
			id = fmt.Sprintf("%s/%s#%d", mirrorSandboxID(p), st.Name, st.RestartCount)
		}
		attempt := uint32(0)
		if st.RestartCount > 0 {
			attempt = uint32(st.RestartCount)
		}
		out = append(out, &cri.Container{
			Id: id, PodSandboxId: mirrorSandboxID(p), State: state, CreatedAt: unixNano(started),
			Metadata: &cri.ContainerMetadata{Name: st.Name, Attempt: attempt},
			Image:    &cri.ImageSpec{},
			Labels:   map[string]string{labelContainerName: st.Name},
		})
	}
	return out
}
