package follow

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// observation is one poll of the runtime: every sandbox by pod key, newest
// first, and every container by sandbox.
type observation struct {
	byKey      map[string][]*cri.PodSandbox
	containers map[string][]*cri.Container // by sandbox ID
}

func (f *Follower) observe(ctx context.Context) (*observation, error) {
	sbs, err := f.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, err
	}
	cs, err := f.rt.ListContainers(ctx, nil)
	if err != nil {
		return nil, err
	}
	obs := &observation{byKey: make(map[string][]*cri.PodSandbox, len(sbs)), containers: make(map[string][]*cri.Container, len(sbs))}
	for _, sb := range sbs {
		if key := podKey(sb); key != "" {
			obs.byKey[key] = append(obs.byKey[key], sb)
		}
	}
	for _, l := range obs.byKey {
		if len(l) > 1 {
			sort.Slice(l, func(i, j int) bool { return l[i].GetCreatedAt() > l[j].GetCreatedAt() })
		}
	}
	for _, c := range cs {
		obs.containers[c.GetPodSandboxId()] = append(obs.containers[c.GetPodSandboxId()], c)
	}
	return obs, nil
}

// podKey is namespace/name of the pod a sandbox is for, from the kubelet's
// labels, else from its metadata; empty when neither says.
func podKey(sb *cri.PodSandbox) string {
	l := sb.GetLabels()
	ns, name := l[labelPodNamespace], l[labelPodName]
	if name == "" {
		ns, name = sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName()
	}
	if name == "" {
		return ""
	}
	return ns + "/" + name
}

func sandboxUID(sb *cri.PodSandbox) string {
	if uid := sb.GetLabels()[labelPodUID]; uid != "" {
		return uid
	}
	return sb.GetMetadata().GetUid()
}

func containerName(c *cri.Container) string {
	if n := c.GetLabels()[labelContainerName]; n != "" {
		return n
	}
	return c.GetMetadata().GetName()
}

func ready(sb *cri.PodSandbox) bool {
	return sb.GetState() == cri.PodSandboxState_SANDBOX_READY
}

func created(ns int64) time.Time { return time.Unix(0, ns) }

// newest is the newest container of each name: the highest attempt, then
// the latest created.
func newest(cs []*cri.Container) map[string]*cri.Container {
	out := make(map[string]*cri.Container, len(cs))
	for _, c := range cs {
		name := containerName(c)
		old, ok := out[name]
		if !ok || c.GetMetadata().GetAttempt() > old.GetMetadata().GetAttempt() ||
			(c.GetMetadata().GetAttempt() == old.GetMetadata().GetAttempt() && c.GetCreatedAt() > old.GetCreatedAt()) {
			out[name] = c
		}
	}
	return out
}

// started says whether the pod of an ADD or UPDATE runs, and if not what
// is seen instead (why, and its cause in a word); why is empty when there
// is nothing to follow. took runs from the change to the newest creation
// the verdict rests on.
func (f *Follower) started(ctx context.Context, key string, t *target, obs *observation) (done bool, why string, cause types.FollowCause, took time.Duration) {
	sbs := obs.byKey[key]
	after := t.at.Add(-createdSlack)
	uid := ""
	if t.ch.Pod != nil {
		uid = string(t.ch.Pod.UID)
	}
	if t.ch.Op == types.OpUpdate && uid != "" && t.restart == nil {
		f.classify(t, uid, sbs, obs, after)
		if t.inPlace && len(t.restart) == 0 {
			f.log.Debug("in-place update changes no image: the kubelet restarts nothing, not followed", "pod", key)
			return false, "", "", 0
		}
	}
	// A restart's sandbox is created only once the old pod has stopped, so
	// for a UID that already had one before the change (the old pod, or a
	// winner taken back) only a sandbox created after the change counts,
	// with no slack: the old pod's own, created a moment before, is not it.
	//
	// A change made at a relist podwatch saw is dated by when podwatch
	// read that relist's folder open: late, never early. The kubelet acts
	// on its relist at once, so its answer may come before that date, by
	// as much as the read was late: a sandbox created within relistLate
	// before it is no old pod's. One made at a relist podwatch did not see
	// is dated by its own, which may come long after the kubelet's: there
	// a sandbox created since the pod's change before, whose containers
	// run this change's images, is no old pod's either.
	old := map[string]bool{}
	images := containerImages(t.ch.Pod)
	if t.ch.Op == types.OpUpdate && !t.inPlace {
		before, estimated := t.at, false
		if c := t.ch.Claim; c != nil && c.At == types.ClaimAtRelist {
			estimated = c.Estimate && !t.since.IsZero()
			if !c.Estimate {
				before = t.at.Add(-relistLate)
			}
		}
		for _, s := range sbs {
			at := created(s.GetCreatedAt())
			if !at.Before(before) {
				continue
			}
			if estimated && at.After(t.since) && runsAll(newest(obs.containers[s.GetId()]), images) {
				continue
			}
			old[sandboxUID(s)] = true
		}
	}
	var sb *cri.PodSandbox
	t.uid = uid
	back := ""
	if t.ch.Op == types.OpUpdate && !t.inPlace {
		back = f.takenBack(key, sbs, t.ch, uid)
		if back != "" && t.ch.Pod != nil && t.ch.Pod.Config != "" {
			f.backs[key] = tookBack{file: t.ch.File, config: t.ch.Pod.Config, uid: back, since: t.ch.Back.Since}
		}
	}
	for _, s := range sbs {
		if back != "" {
			// The kubelet runs one UID at a time: only its newest sandbox
			// can be the pod taken back, and only once it has that UID.
			if sandboxUID(s) == back && !f.earliest(s).Before(t.ch.Back.Since) {
				sb = s
			}
			break
		}
		if uid != "" && sandboxUID(s) != uid {
			continue
		}
		from := after
		if old[sandboxUID(s)] {
			from = t.at
		}
		if t.inPlace || !created(s.GetCreatedAt()).Before(from) {
			sb = s
			break
		}
	}
	if sb == nil {
		why, cause = "no "+f.sandbox+" created since the change", types.CauseNoSandbox
		for _, s := range sbs {
			if ready(s) {
				why += fmt.Sprintf("; the old pod (UID %s) still runs", sandboxUID(s))
				cause = types.CauseOldPodRunning
				break
			}
		}
		return false, why, cause, 0
	}
	t.uid = sandboxUID(sb)
	if !ready(sb) {
		return false, fmt.Sprintf("its %s (UID %s) is not ready", f.sandbox, sandboxUID(sb)), types.CauseSandboxNotReady, 0
	}
	last := created(sb.GetCreatedAt())
	if t.inPlace {
		last = t.at
	}
	from := t.at
	if back != "" && last.Before(from) {
		// Created before podwatch's own relist dated the change: timed
		// from the watch event, the earliest the kubelet can have made it.
		from = t.ch.Back.Since
	}
	cs := newest(obs.containers[sb.GetId()])
	names := containerNames(t.ch.Pod)
	if len(names) == 0 {
		for n := range cs {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	if len(names) == 0 {
		return false, fmt.Sprintf("its %s (UID %s) runs no container yet", f.sandbox, sandboxUID(sb)), types.CauseContainerNotCreated, 0
	}
	var problems []string
	problem := func(c types.FollowCause, text string) {
		if len(problems) == 0 {
			cause = c
		}
		problems = append(problems, text)
	}
	for _, name := range names {
		c := cs[name]
		if c == nil {
			problem(types.CauseContainerNotCreated, fmt.Sprintf("container %s not created (its image may not be pulled)", name))
			continue
		}
		if t.inPlace && t.restart[name] && !replaced(c, t.before[name], after) {
			problem(types.CauseContainerNotRunning, fmt.Sprintf("container %s not restarted with its new image", name))
			continue
		}
		if p, pc := f.containerProblem(ctx, name, c); p != "" {
			problem(pc, p)
			continue
		}
		if up := f.clk.Since(created(c.GetCreatedAt())); f.opts.MinRunning > 0 && c.GetState() == cri.ContainerState_CONTAINER_RUNNING && up < f.opts.MinRunning {
			problem(types.CauseContainerNotRunning, fmt.Sprintf("container %s running for only %v (--follow-min-running %v)", name, up.Round(100*time.Millisecond), f.opts.MinRunning))
			continue
		}
		if at := created(c.GetCreatedAt()); at.After(last) {
			last = at
		}
	}
	if len(problems) > 0 {
		return false, strings.Join(problems, "; "), cause, 0
	}
	if why := f.notReady(ctx, key, sandboxUID(sb)); why != "" {
		return false, why, types.CauseContainerNotRunning, 0
	}
	return true, "", "", last.Sub(from)
}

// takenBack is the UID of the pod that a change made at a relist podwatch
// did not see takes back (types.TakeBack), "" when there is no window or
// the runtime does not show that pod: the UID of the newest sandbox
// created before the watch event that displaced it, if that sandbox was
// created after the kubelet began to run the pod (Ran). A new UID's
// sandbox is created only once the old pod stopped, so that sandbox can
// be no other pod's; one created earlier may be the pod before, which the
// kubelet may still have been stopping, or bringing back, when the watch
// event came. Where the manifest pins the UID (uid), it must be that one.
// A sandbox whose time (of a coarse source) does not say on which side of
// Since it was created leaves the UID unknown.
//
// When podwatch did not see the kubelet begin to run the pod (no Ran:
// it was taken back at a relist podwatch did not see either), the
// follower may know it: the last pod taken back whose UID it found, from
// the same file and content, has the same UID, and the watch event that
// displaced it then stands for Ran. The kubelet began to run it again
// after that event, at its relist: a sandbox of that UID created since
// the event is that pod's (the kubelet does not start the pod it is
// displacing), so the sandbox before this watch event must be one, with
// that UID. One older may be a start the kubelet had not made yet when
// the first event came, as when the pod it took back then never started
// before this event.
//
// Knowing the UID is what lets the follower accept a sandbox created
// before the change's At, within the window: the watch event's own pod,
// whose sandbox the kubelet may create there too, has another UID; and
// when the UID is not known, the follower counts only what comes after At,
// as for any change.
func (f *Follower) takenBack(key string, sbs []*cri.PodSandbox, ch types.Change, uid string) string {
	b := ch.Back
	if b.IsZero() {
		return ""
	}
	ran, want, seen := b.Ran, uid, false
	if ran.IsZero() {
		l, ok := f.backs[key]
		if !ok || ch.Pod == nil || l.file != ch.File || l.config != ch.Pod.Config || (uid != "" && uid != l.uid) {
			return ""
		}
		ran, want, seen = l.since, l.uid, true
	}
	for i, s := range sbs { // newest first
		if !f.earliest(s).Before(b.Since) {
			continue // within the window
		}
		if !created(s.GetCreatedAt()).Before(b.Since) || f.earliest(s).Before(ran) || (want != "" && sandboxUID(s) != want) {
			return ""
		}
		if !seen && !f.switched(sbs[i+1:], sandboxUID(s), ran) {
			return ""
		}
		return sandboxUID(s)
	}
	return ""
}

// switched says whether the sandboxes older than one of UID uid created
// after ran (older, newest first) show the kubelet's switch to uid done:
// every one since ran has uid too, and the newest before ran another UID.
// When the kubelet began to run the pod taken back, the pod before it may
// still have been starting: its sandbox, created after ran, would look
// like the new pod's. Finding the pod before, older, and of another UID,
// rules that out; finding none leaves it open.
func (f *Follower) switched(older []*cri.PodSandbox, uid string, ran time.Time) bool {
	for _, s := range older {
		switch {
		case !f.earliest(s).Before(ran):
			if sandboxUID(s) != uid {
				return false
			}
		case created(s.GetCreatedAt()).Before(ran):
			return sandboxUID(s) != uid
		default:
			return false // on which side of ran it was created is not known
		}
	}
	return false
}

// tookBack is a pod taken back at a relist podwatch did not see, as the
// follower found it: the file and content it runs from (the kubelet
// derives the UID from them), its UID, and the watch event after which
// the kubelet took it back (TakeBack.Since).
type tookBack struct {
	file, config, uid string
	since             time.Time
}

// earliest is when s may have been created at the earliest: its creation
// time, less the grain of a source that keeps whole seconds.
func (f *Follower) earliest(s *cri.PodSandbox) time.Time {
	return created(s.GetCreatedAt()).Add(-f.grain)
}

// containerProblem is what keeps a container from counting as running or
// done, and its cause; empty when it runs or exited 0.
func (f *Follower) containerProblem(ctx context.Context, name string, c *cri.Container) (string, types.FollowCause) {
	switch c.GetState() {
	case cri.ContainerState_CONTAINER_RUNNING:
		return "", ""
	case cri.ContainerState_CONTAINER_CREATED:
		return fmt.Sprintf("container %s created but not started", name), types.CauseContainerNotRunning
	case cri.ContainerState_CONTAINER_EXITED:
		st, err := f.rt.ContainerStatus(ctx, c.GetId())
		if err != nil {
			return fmt.Sprintf("container %s exited (status unknown: %v)", name, err), types.CauseContainerExited
		}
		if st.GetExitCode() == 0 {
			return "", ""
		}
		return fmt.Sprintf("container %s exited with code %d%s", name, st.GetExitCode(), reason(st)), types.CauseContainerExited
	}
	return fmt.Sprintf("container %s is in an unknown state", name), types.CauseContainerNotRunning
}

func reason(st *cri.ContainerStatus) string {
	if st.GetReason() == "" {
		return ""
	}
	return " (" + st.GetReason() + ")"
}

// classify tells an in-place update (metadata.uid set, and that pod runs
// from before the change) from a new pod, records the containers that ran
// before the change, and says which of them the change restarts: those
// whose kubelet hash (name and image) changes. The old image is the one the
// runtime was asked for (ImageSpec.UserSpecifiedImage); when the runtime
// does not give it back, the old container's hash annotation is compared
// with ContainerHash of the new image; when neither is there, the
// container is taken as restarted, so that a runtime that says nothing
// earns a late warning rather than a false StaticPodStarted.
//
// A ready sandbox of that UID made before podwatch saw the change runs the
// pod being updated, however shortly before: an edit a moment after the pod
// started is still in place. createdSlack does not apply to it, as the
// kubelet makes a sandbox for a UID it did not run only after the pod it
// replaces has stopped, seconds after the change.
func (f *Follower) classify(t *target, uid string, sbs []*cri.PodSandbox, obs *observation, after time.Time) {
	t.restart = map[string]bool{}
	var running *cri.PodSandbox
	for _, s := range sbs {
		if sandboxUID(s) == uid && ready(s) && created(s.GetCreatedAt()).Before(t.at) {
			running = s
			break
		}
	}
	if running == nil {
		return // a new pod: its sandbox must be new
	}
	t.inPlace = true
	images := containerImages(t.ch.Pod)
	t.before = recordBefore(obs.containers[running.GetId()], t.at, after, images)
	for name, image := range images {
		old, ok := t.before[name]
		switch {
		case !ok:
			t.restart[name] = true
		case old.image != "":
			t.restart[name] = old.image != image
		case old.hash != "":
			t.restart[name] = old.hash != ContainerHash(name, image)
		default:
			t.restart[name] = true
		}
	}
	for name, r := range t.restart {
		if !r {
			delete(t.restart, name)
		}
	}
}

// oldContainers are the containers of one name that ran in the pod's
// sandbox before an in-place update: their IDs, and the image and hash of
// the newest of them, the one the kubelet replaces.
type oldContainers struct {
	ids   map[string]bool
	image string // as the kubelet asked for it, "" when the runtime does not say
	hash  string // io.kubernetes.container.hash, "" when absent
}

// recordBefore records, by name, the containers created before the change
// (seen at change), but for those created within createdSlack of it (after
// after) that already run its image (images, by name): the kubelet watches
// the same folder and may have answered first. One made then with the old
// image, or with none the runtime tells, ran before the change.
func recordBefore(cs []*cri.Container, change, after time.Time, images map[string]string) map[string]oldContainers {
	var older []*cri.Container
	for _, c := range cs {
		at := created(c.GetCreatedAt())
		if at.Before(after) || at.Before(change) && !runsImage(c, images[containerName(c)]) {
			older = append(older, c)
		}
	}
	out := map[string]oldContainers{}
	for name, c := range newest(older) {
		out[name] = oldContainers{ids: map[string]bool{}, image: c.GetImage().GetUserSpecifiedImage(), hash: c.GetAnnotations()[annotationHash]}
	}
	for _, c := range older {
		out[containerName(c)].ids[c.GetId()] = true
	}
	return out
}

// runsImage says whether c is known to run image: the runtime gives back
// that image as the kubelet asked for it, or c's hash is the one the
// kubelet gives a container of that image.
func runsImage(c *cri.Container, image string) bool {
	if image == "" {
		return false
	}
	if u := c.GetImage().GetUserSpecifiedImage(); u != "" {
		return u == image
	}
	h := c.GetAnnotations()[annotationHash]
	return h != "" && h == ContainerHash(containerName(c), image)
}

// runsAll says whether each container of images, by name, is known to
// run its image in cs (newest, by name).
func runsAll(cs map[string]*cri.Container, images map[string]string) bool {
	if len(images) == 0 {
		return false
	}
	for name, image := range images {
		if c := cs[name]; c == nil || !runsImage(c, image) {
			return false
		}
	}
	return true
}

// replaced says whether c is the kubelet's new container for one that ran
// before an in-place update: created after the change, not one of those
// recorded before it, and with another hash than the one it replaces (a
// crash restart of the old container racing the change keeps the old
// hash). A runtime that keeps no hash leaves only the first two.
func replaced(c *cri.Container, old oldContainers, after time.Time) bool {
	if created(c.GetCreatedAt()).Before(after) || old.ids[c.GetId()] {
		return false
	}
	return old.hash == "" || c.GetAnnotations()[annotationHash] != old.hash
}

// stopped says whether a removed pod is stopped: no sandbox of it READY
// and none of its containers running. sandbox names a sandbox in the
// message.
func stopped(obs *observation, key, sandbox string) (bool, string) {
	var still []string
	for _, s := range obs.byKey[key] {
		if ready(s) {
			still = append(still, fmt.Sprintf("its %s (UID %s) is ready", sandbox, sandboxUID(s)))
		}
		for _, c := range obs.containers[s.GetId()] {
			if c.GetState() == cri.ContainerState_CONTAINER_RUNNING {
				still = append(still, fmt.Sprintf("container %s runs", containerName(c)))
			}
		}
	}
	if len(still) > 0 {
		return false, strings.Join(still, "; ")
	}
	return true, ""
}

// watchRestarts reports a new container for the same name in the same
// sandbox of a static pod when no change to the pod is followed. The first
// poll only learns what runs.
func (f *Follower) watchRestarts(ctx context.Context, obs *observation) {
	now := make(map[string]seenContainer, len(f.seen))
	for key, sbs := range obs.byKey {
		for _, sb := range sbs {
			if !ready(sb) || (!f.static[key] && sb.GetAnnotations()[annotationSource] != "file") {
				continue
			}
			for name, c := range newest(obs.containers[sb.GetId()]) {
				id := sb.GetId() + "/" + name
				cur := seenContainer{id: c.GetId(), attempt: c.GetMetadata().GetAttempt()}
				now[id] = cur
				prev, ok := f.seen[id]
				if !f.primed || !ok || prev == cur || f.targets[key] != nil {
					continue
				}
				f.reportRestart(ctx, key, sb, name, prev)
			}
		}
	}
	f.seen, f.primed = now, true
}

func (f *Follower) reportRestart(ctx context.Context, key string, sb *cri.PodSandbox, name string, prev seenContainer) {
	last := ""
	if st, err := f.rt.ContainerStatus(ctx, prev.id); err == nil && st.GetState() == cri.ContainerState_CONTAINER_EXITED {
		last = fmt.Sprintf("; it exited with code %d%s", st.GetExitCode(), reason(st))
	}
	last += f.kubeletSaysRestarted(ctx, key, sandboxUID(sb), name, prev.id)
	ns, pod, _ := strings.Cut(key, "/")
	// No attempt number in the message: the Event's count says how often.
	f.record(ctx, types.Change{
		Type: v1.EventTypeWarning, Reason: types.ReasonRestarting,
		Object:  types.Object{Kind: types.KindPod, Namespace: ns, Name: pod},
		Key:     name + "/" + string(sandboxUID(sb)),
		Message: fmt.Sprintf("container %s of %s (UID %s) restarted with no manifest change%s", name, pod, sandboxUID(sb), last),
	}, 0)
}
