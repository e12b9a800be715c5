package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

const (
	// addedWait bounds the look for the mirror pod of a StaticPodAdded:
	// the kubelet creates it as soon as it syncs a new static pod, so one
	// that is still missing may never come (its namespace does not exist,
	// say).
	addedWait = 10 * time.Second
	// firstLook is how soon after an Event's create the sink first looks
	// for the mirror pod to move it to; the looks then grow apart up to
	// mirrorRecheck, so a pod that never gets one costs a few reads.
	firstLook     = time.Second
	mirrorRecheck = 5 * time.Second
)

// ErrRunning is returned by Run when another Run of the same Sink is still
// going.
var ErrRunning = errors.New("kube: sink Run already running")

// move is a Pod Event written before the kubelet created the mirror pod of
// the change it reports: on the old mirror pod's uid, or without one. Run
// moves it to the new mirror pod once that appears.
type move struct {
	pod    ktypes.NamespacedName
	reason string
	// stale is the config hash that is not the change's: the old mirror
	// pod's, "" when none was known. A mirror pod with another hash is the
	// one the Event is moved to.
	stale    ktypes.UID
	since    time.Time // when the Event was written
	deadline time.Time // the last look
	next     time.Time // the next look
}

// awaitMirror has Run move the Event name, just created about pod with uid
// stale, to the mirror pod the kubelet creates for the change it reports,
// looking for it for at most bound.
func (s *Sink) awaitMirror(name, pod ktypes.NamespacedName, reason string, stale ktypes.UID, bound time.Duration) {
	if s.opts.MirrorWait < 0 || bound <= 0 {
		return
	}
	now := s.clk.Now()
	s.mu.Lock()
	for n, m := range s.moves {
		if now.Sub(m.deadline) > s.opts.MirrorWait {
			delete(s.moves, n) // no Run took it: forget it
		}
	}
	s.moves[name] = &move{
		pod: pod, reason: reason, stale: stale,
		since: now, deadline: now.Add(bound), next: now.Add(min(firstLook, bound)),
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Run moves Pod Events written before the kubelet created their mirror pod
// (see SinkOptions.MirrorWait) until ctx ends, and returns nil then. The
// moves are the sink's own requests, not pkg/events' writes: they wait for
// no KeyInterval. Only one Run may go at a time.
func (s *Sink) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer s.running.Store(false)
	var t clock.Timer
	stop := func() {
		if t != nil {
			t.Stop()
			t = nil
		}
	}
	defer stop()
	for {
		next := s.lookRound(ctx)
		var tc <-chan time.Time
		if !next.IsZero() {
			t = s.clk.NewTimer(max(next.Sub(s.clk.Now()), time.Nanosecond))
			tc = t.C()
		}
		if s.waiting != nil {
			s.waiting(next)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		case <-tc:
			t = nil
		}
		stop()
	}
}

// lookRound looks for the mirror pods of the moves that are due, one read
// per pod, moves the Events whose new mirror pod is there, gives up on the
// ones past their deadline, and returns when the next look is due (zero:
// none waits).
func (s *Sink) lookRound(ctx context.Context) time.Time {
	now := s.clk.Now()
	s.mu.Lock()
	due := map[ktypes.NamespacedName]bool{}
	for _, m := range s.moves {
		if !m.next.After(now) {
			due[m.pod] = true
		}
	}
	s.mu.Unlock()
	parked := s.parkedErr() != nil
	for pod := range due {
		if ctx.Err() != nil {
			break
		}
		var uid ktypes.UID
		if !parked {
			uid = s.lookMirror(ctx, pod)
		}
		s.moveTo(ctx, pod, uid)
	}
	return s.reschedule(due)
}

// lookMirror returns the config hash of the mirror pod pod, "" when there
// is none or it could not be read.
func (s *Sink) lookMirror(ctx context.Context, pod ktypes.NamespacedName) ktypes.UID {
	p, err := s.getMirror(ctx, pod)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			s.log.Debug("reading a mirror pod to move an Event to failed; looking again later", "pod", pod, "err", err)
		}
		return ""
	}
	return ktypes.UID(p.Annotations[MirrorAnnotation])
}

// moveTo moves each Event waiting for pod's new mirror pod to uid, when
// that is not the hash it waits to see replaced.
func (s *Sink) moveTo(ctx context.Context, pod ktypes.NamespacedName, uid ktypes.UID) {
	if uid == "" {
		return
	}
	s.mu.Lock()
	var names []ktypes.NamespacedName
	for name, m := range s.moves {
		if m.pod == pod && m.stale != uid {
			names = append(names, name)
		}
	}
	s.mu.Unlock()
	if len(names) > 0 {
		s.remember(pod, uid)
	}
	for _, name := range names {
		err := s.patchUID(ctx, name, uid)
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Debug("moving an Event to its new mirror pod failed; trying again at the next look", "event", name, "uid", uid, "err", err)
			continue
		}
		s.mu.Lock()
		m := s.moves[name]
		delete(s.moves, name)
		s.mu.Unlock()
		if err == nil && m != nil {
			s.log.Debug("Event moved to the new mirror pod", "event", name, "pod", pod, "uid", uid, "after", s.clk.Since(m.since))
		}
	}
}

// patchUID points the Event name at the mirror pod with hash uid. A merge
// patch of involvedObject.uid: the API validates core/v1 Events' updates
// without holding involvedObject immutable, which events.k8s.io/v1 does.
func (s *Sink) patchUID(ctx context.Context, name ktypes.NamespacedName, uid ktypes.UID) error {
	body, err := json.Marshal(map[string]any{"involvedObject": map[string]any{"uid": uid}})
	if err != nil {
		return fmt.Errorf("kube: move patch body: %w", err)
	}
	_, err = s.client.Events(name.Namespace).Patch(ctx, name.Name, ktypes.MergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsForbidden(err) {
		s.logForbidden("patch events", err)
	}
	return err
}

// reschedule sets the next look of the moves that were due, drops those
// past their deadline, and returns the earliest next look of all.
func (s *Sink) reschedule(due map[ktypes.NamespacedName]bool) time.Time {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for name, m := range s.moves {
		if due[m.pod] && !m.next.After(now) {
			if !now.Before(m.deadline) {
				delete(s.moves, name)
				s.log.Info("no new mirror pod for a static pod change within the mirror wait: its Event stays where it was written, so `kubectl describe pod` of a later mirror pod may not show it",
					"pod", m.pod, "event", name, "reason", m.reason, "waited", now.Sub(m.since))
				continue
			}
			waited := now.Sub(m.since)
			m.next = now.Add(min(max(waited/2, firstLook), mirrorRecheck))
			if m.next.After(m.deadline) {
				m.next = m.deadline
			}
		}
		if next.IsZero() || m.next.Before(next) {
			next = m.next
		}
	}
	return next
}
