package follow

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// MirrorPods reads a static pod's mirror pod, in whose status a kubelet
// with an API server publishes what the runtime does not hold: why a
// container waits (ErrImagePull, CrashLoopBackOff, ...) and the message
// it left when it terminated, which the kubelet reads from a host file.
// pkg/kube's MirrorPods implements it with one get per call.
type MirrorPods interface {
	// MirrorPod returns the mirror pod namespace/name, or nil and no
	// error when there is none.
	MirrorPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
}

// The mirror pod's annotation that holds the static pod's UID (the
// kubelet's config hash), as pkg/kube names it.
const annotationMirror = "kubernetes.io/config.mirror"

const (
	// mirrorTimeout bounds one read of a mirror pod: a verdict from the
	// runtime waits for the API server at most that long.
	mirrorTimeout = 2 * time.Second
	// mirrorRetry is how long after a failed read no mirror pod is read,
	// so that with the API server down a poll with many verdicts does not
	// wait mirrorTimeout for each.
	mirrorRetry = 30 * time.Second
	// maxStatusText bounds each text taken from the status, so that the
	// Event's message (1,024 bytes) keeps the runtime's part.
	maxStatusText = 200
)

// mirrorUnavailable is said when the mirror pod could not be read; the
// error is logged, not said, so that the message stays the same while the
// same thing is seen.
const mirrorUnavailable = "; the mirror pod could not be read"

// WithMirrorPods has the follower explain StaticPodNotStarted and
// StaticPodRestarting with what the mirror pods' status says; call it
// before Run. Without it, only the runtime is read.
func (f *Follower) WithMirrorPods(m MirrorPods) *Follower {
	f.mirrors = m
	return f
}

// mirrorPod reads the mirror pod of key for the pod whose UID is uid; nil
// when there is none, it is another pod's (an old UID's, whose status is
// not the new one's) or it cannot be read, which ok says.
func (f *Follower) mirrorPod(ctx context.Context, key, uid string) (pod *v1.Pod, ok bool) {
	if f.mirrors == nil || uid == "" {
		return nil, true
	}
	now := f.clk.Now()
	if now.Before(f.mirrorDownUntil) {
		return nil, false
	}
	ns, name, _ := strings.Cut(key, "/")
	mctx, cancel := context.WithTimeout(ctx, mirrorTimeout)
	defer cancel()
	pod, err := f.mirrors.MirrorPod(mctx, ns, name)
	if err != nil {
		f.mirrorDownUntil = f.clk.Now().Add(mirrorRetry)
		if !f.mirrorFailing {
			f.log.Warn("cannot read a mirror pod: the follower's warnings say what the runtime shows, without the kubelet's status", "pod", key, "err", err)
		}
		f.mirrorFailing = true
		return nil, false
	}
	if f.mirrorFailing {
		f.log.Info("mirror pods are read again")
	}
	f.mirrorFailing = false
	if pod == nil {
		return nil, true
	}
	if got := pod.Annotations[annotationMirror]; got != uid {
		f.log.Debug("the mirror pod is not the followed pod's: its status is left out", "pod", key, "mirror", got, "uid", uid)
		return nil, true
	}
	return pod, true
}

// notReady is why a pod whose containers run does not count as started
// yet: one of them has a readiness probe and the kubelet's status, in the
// mirror pod of the pod's UID, does not say it is ready. "" when all are,
// or when there is no mirror pod of that UID to ask (no cluster, or the
// kubelet has not made it yet): the runtime's word stands then.
func (f *Follower) notReady(ctx context.Context, key, uid string) string {
	if f.mirrors == nil {
		return ""
	}
	pod, ok := f.mirrorPod(ctx, key, uid)
	if !ok || pod == nil {
		return ""
	}
	ready := map[string]bool{}
	for _, st := range pod.Status.ContainerStatuses {
		ready[st.Name] = st.Ready
	}
	var not []string
	for _, c := range pod.Spec.Containers {
		if c.ReadinessProbe != nil && !ready[c.Name] {
			not = append(not, c.Name)
		}
	}
	if len(not) == 0 {
		return ""
	}
	return fmt.Sprintf("container %s runs, but the kubelet's readiness probe has not passed (the mirror pod's status)", strings.Join(not, ", "))
}

// kubeletSaysNotStarted is what the mirror pod says of the containers of
// a pod that does not run its change, as a suffix for the message: each
// container that waits or terminated, in the pod's order, or "".
func (f *Follower) kubeletSaysNotStarted(ctx context.Context, key string, t *target) string {
	pod, ok := f.mirrorPod(ctx, key, t.uid)
	if !ok {
		return mirrorUnavailable
	}
	if pod == nil {
		return ""
	}
	published := publishedObject(t)
	statuses := map[string]*v1.ContainerStatus{}
	for i := range pod.Status.ContainerStatuses {
		statuses[pod.Status.ContainerStatuses[i].Name] = &pod.Status.ContainerStatuses[i]
	}
	names := containerNames(t.ch.Pod)
	if len(names) == 0 {
		for _, s := range pod.Status.ContainerStatuses {
			names = append(names, s.Name)
		}
	}
	var said []string
	for _, name := range names {
		s := statuses[name]
		if s == nil {
			continue
		}
		var parts []string
		if w := s.State.Waiting; w != nil && w.Reason != "" {
			text := w.Reason
			// CrashLoopBackOff's message only names the back-off, which
			// grows at every restart, and the container; what it backs
			// off from is the termination said next.
			if w.Message != "" && w.Reason != "CrashLoopBackOff" {
				text += ": " + statusText(w.Message, pod, published)
			}
			parts = append(parts, "waiting: "+text)
		}
		term := s.State.Terminated
		if term == nil {
			term = s.LastTerminationState.Terminated
		}
		if term != nil && (term.ExitCode != 0 || s.State.Running == nil) {
			parts = append(parts, terminated(term, pod, published))
		}
		if len(parts) > 0 {
			said = append(said, fmt.Sprintf("container %s %s", name, strings.Join(parts, ", ")))
		}
	}
	if len(said) == 0 {
		return ""
	}
	return "; the mirror pod's status: " + strings.Join(said, "; ")
}

// kubeletSaysRestarted is what the mirror pod says of the termination of
// container name whose runtime ID was id: its message, when the status is
// about that very container; "" otherwise.
func (f *Follower) kubeletSaysRestarted(ctx context.Context, key, uid, name, id string) string {
	pod, ok := f.mirrorPod(ctx, key, uid)
	if !ok {
		return mirrorUnavailable
	}
	if pod == nil {
		return ""
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != name {
			continue
		}
		for _, term := range []*v1.ContainerStateTerminated{s.LastTerminationState.Terminated, s.State.Terminated} {
			if term != nil && sameContainer(term.ContainerID, id) && term.Message != "" {
				return fmt.Sprintf("; its termination message: %q", statusText(term.Message, pod))
			}
		}
	}
	return ""
}

// sameContainer says whether the status's container ID, "<runtime>://<id>",
// is the runtime's id.
func sameContainer(statusID, id string) bool {
	_, after, ok := strings.Cut(statusID, "://")
	return ok && id != "" && after == id
}

func terminated(term *v1.ContainerStateTerminated, pods ...*v1.Pod) string {
	text := fmt.Sprintf("last terminated with exit code %d", term.ExitCode)
	if term.Reason != "" {
		text += " (" + term.Reason + ")"
	}
	if term.Message != "" {
		text += fmt.Sprintf(": %q", statusText(term.Message, pods...))
	}
	return text
}

// publishedObject is the published pod of t, whose values the kubelet's
// text may echo; nil when it cannot be decoded.
func publishedObject(t *target) *v1.Pod {
	if t.ch.Pod == nil {
		return nil
	}
	pod, err := t.ch.Pod.Object()
	if err != nil {
		return nil
	}
	return pod
}

// statusText is text from the kubelet's status as a message may hold it:
// the values of pods no message shows redacted (the mirror pod's spec is
// the static pod's), on one line, at most maxStatusText bytes.
func statusText(s string, pods ...*v1.Pod) string {
	for _, p := range pods {
		s = manifest.Redact(s, p)
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) <= maxStatusText {
		return s
	}
	cut := maxStatusText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
