package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// A pod found at a start with no published state (types.ReasonFound) is
// an inventory, not a change: the kubelet may have run it for months, or
// start it now (a boot). The diff cannot tell which; the follower can,
// from the creation times of the pod's sandboxes (or mirror pods), not
// from the kubelet's own ADD at its start, which a kubelet restarted
// without a reboot also says while the containers keep running. So the
// agent hands the Found change to the follower unrecorded, and the
// follower records it once, worded by what its first poll sees:
//
//   - the newest sandbox was created before podwatch saw the file (less
//     createdSlack) and is ready, running the pod's images as far as the
//     runtime tells: found running, since its creation;
//   - it runs another image: the kubelet restarts it with this config,
//     which is then followed as an ADD;
//   - none, one created since, or one no longer ready: the kubelet starts
//     it (the boot case), followed as an ADD;
//   - the runtime does not answer by the deadline: podwatch cannot tell.
//
// Nothing flows back to the diff: the published state is the same in
// every case.

// takeFound keeps a found pod to word at the next poll, beside the
// changes followed: a newer change of the pod does not supersede the
// inventory of what ran when podwatch started.
func (f *Follower) takeFound(ch types.Change, at time.Time, key string) {
	f.found[key] = &target{ch: ch, at: at, deadline: at.Add(f.opts.Deadline)}
	f.static[key] = true
}

// inventory words and records the found pods the poll (obs, nil when the
// runtime did not answer) can tell of, and hands on to the targets those
// the kubelet is yet to start.
func (f *Follower) inventory(ctx context.Context, obs *observation, now time.Time) {
	for key, t := range f.found {
		seen := types.Found{Through: f.source, At: t.at}
		if t.ch.Found != nil {
			seen.Head = t.ch.Found.Head
		}
		if obs == nil {
			if now.Before(t.deadline) {
				continue
			}
			seen.Case, seen.Detail = types.FoundUnknown, fmt.Sprint(f.runtimeErr)
		} else {
			f.foundCase(key, t, obs, &seen)
		}
		delete(f.found, key)
		ch := t.ch
		ch.Found, ch.Message = &seen, seen.Message()
		// Counted by the agent with the diff's changes, not as a report.
		f.emit(ctx, ch)
		if seen.Case == types.FoundStarting || seen.Case == types.FoundRestarting {
			if _, newer := f.targets[key]; !newer {
				f.targets[key] = t
			}
		}
	}
}

// foundCase fills in seen from the pod's sandboxes in obs.
func (f *Follower) foundCase(key string, t *target, obs *observation, seen *types.Found) {
	sbs := obs.byKey[key]
	if len(sbs) == 0 {
		seen.Case = types.FoundStarting
		return
	}
	sb := sbs[0]
	seen.UID, seen.Since = sandboxUID(sb), created(sb.GetCreatedAt())
	switch {
	case !seen.Since.Before(t.at.Add(-createdSlack)):
		seen.Case = types.FoundStarting
	case !ready(sb):
		seen.Case = types.FoundStarting
		seen.Detail = fmt.Sprintf("its newest sandbox (UID %s, created %s before podwatch started) is not ready", seen.UID, types.Span(t.at.Sub(seen.Since)))
	default:
		seen.Case = types.FoundRunning
		if other := otherConfig(t.ch.Pod, sb, obs); other != "" {
			seen.Case, seen.Detail = types.FoundRestarting, other
		}
	}
}

// otherConfig says how the pod that sb runs differs from p, as far as the
// runtime tells: a pinned UID it does not have, or a container whose
// image is known not to be p's; "" when none is seen to.
func otherConfig(p *types.Pod, sb *cri.PodSandbox, obs *observation) string {
	if p == nil {
		return ""
	}
	if p.UID != "" && string(p.UID) != sandboxUID(sb) {
		return fmt.Sprintf("the manifest sets UID %s", p.UID)
	}
	cs := newest(obs.containers[sb.GetId()])
	for _, name := range containerNames(p) {
		c := cs[name]
		if c == nil {
			continue
		}
		image := containerImages(p)[name]
		told := c.GetImage().GetUserSpecifiedImage() != "" || c.GetAnnotations()[annotationHash] != ""
		if !told || runsImage(c, image) {
			continue
		}
		if u := c.GetImage().GetUserSpecifiedImage(); u != "" {
			return fmt.Sprintf("container %s runs %s, not %s", name, u, image)
		}
		return fmt.Sprintf("container %s runs another image than %s", name, image)
	}
	return ""
}
