package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/events"
)

// MirrorAnnotation holds a mirror pod's config hash, which the kubelet also
// uses as the uid of the Events it records about a static pod: `kubectl
// describe pod` selects Events by involvedObject.uid, so Pod Events carry it.
const MirrorAnnotation = "kubernetes.io/config.mirror"

// AnnotationRetargeted marks an Event re-targeted at the Node because its
// pod's namespace is gone; the value is "<namespace>/<name>" of the pod.
const AnnotationRetargeted = "podwatch.io/retargeted-from"

// Defaults of SinkOptions.
const (
	DefaultMirrorTTL  = 30 * time.Second
	DefaultMirrorWait = 2 * time.Minute
	DefaultJitter     = 2 * time.Second
	// DefaultForbiddenPark: after repeated 403s or 401s, writes wait up to
	// this long before the API is asked again. RBAC is fixed by a person,
	// not by a retry; a fleet of nodes must not hammer the API meanwhile.
	DefaultForbiddenPark = 2 * time.Minute
	// firstPark is the park after a first refusal; it doubles with each
	// further one before a success, up to ForbiddenPark. A kube-apiserver that was
	// just restarted answers 403 until its RBAC authorizer has read the
	// roles and bindings (kubernetes/kubernetes#121635): a full park on
	// that answer would hold every node's counts back long after the API
	// is fine again.
	firstPark = time.Second
)

// SinkOptions tune a Sink. Zero values take the defaults.
type SinkOptions struct {
	// Node is this node's name: the target of re-targeted Events. Required.
	Node string
	// MirrorTTL is how long a mirror pod's uid is reused without a new get.
	MirrorTTL time.Duration
	// MirrorWait bounds how long Run looks for the mirror pod the kubelet
	// creates for a StaticPodUpdated, to move the Event there: it is
	// written at once on the old mirror pod's uid, so that `kubectl
	// describe` of the old pod shows it while the restart is stuck. A
	// StaticPodAdded, or an update whose pod has no mirror pod at all,
	// is looked after for addedWait at most (see mirrorFor).
	// Default DefaultMirrorWait; negative: no Event is moved.
	MirrorWait time.Duration
	// Jitter is the longest random wait before the first write after a
	// retryable failure. pkg/events' backoff is deterministic, so without it
	// thousands of nodes that lost the API together would retry in step.
	Jitter time.Duration
	// ForbiddenPark is the longest writes are held back, without asking
	// the API, after it refused podwatch's credentials: the first refusal
	// holds them back briefly, each further one before a success twice as
	// long, up to this; a success starts over. A refusal within
	// ForbiddenPark of the API failing to serve a write parks nothing: a
	// server coming back up refuses until its RBAC has synced. The Events
	// keep their counts meanwhile. Default DefaultForbiddenPark; negative
	// disables.
	ForbiddenPark time.Duration
}

// Sink writes Events to the API through the core/v1 API. It is safe
// for concurrent use.
type Sink struct {
	client API
	opts   SinkOptions
	clk    clock.Clock
	log    *slog.Logger

	mu        sync.Mutex
	mirrors   map[ktypes.NamespacedName]mirror
	retarget  map[ktypes.NamespacedName]bool // Events re-targeted at the Node, by original namespace/name
	failing   bool                           // the last write failed retryably: jitter the next
	forbidden map[string]bool                // 403 causes already logged
	parked    time.Time                      // no API writes before this, after a 403/401
	parkedBy  error                          // the refusal that parked them
	refusals  int                            // 403/401 answers since the last success
	downAt    time.Time                      // the last write the API did not serve (no answer, 5xx, 429)

	moves   map[ktypes.NamespacedName]*move // Events Run moves to their new mirror pod, by namespace/name in the API; under mu
	wake    chan struct{}                   // a move was added; capacity 1
	running atomic.Bool                     // Run is going
	waiting func(next time.Time)            // tests: Run sleeps until next (zero: a wake-up)
}

// mirror is the last uid read from a mirror pod.
type mirror struct {
	uid ktypes.UID // "" when the pod had no annotation or did not exist
	at  time.Time
}

// NewSink builds a Sink on client. A nil clk is the real clock; a nil log
// discards.
func NewSink(client API, opts SinkOptions, clk clock.Clock, log *slog.Logger) (*Sink, error) {
	if opts.Node == "" {
		return nil, errors.New("kube: node name is required")
	}
	if opts.MirrorTTL == 0 {
		opts.MirrorTTL = DefaultMirrorTTL
	}
	if opts.MirrorWait == 0 {
		opts.MirrorWait = DefaultMirrorWait
	}
	if opts.Jitter == 0 {
		opts.Jitter = DefaultJitter
	}
	if opts.ForbiddenPark == 0 {
		opts.ForbiddenPark = DefaultForbiddenPark
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sink{
		client: client, opts: opts, clk: clk, log: log.With("component", "kube"),
		mirrors:   map[ktypes.NamespacedName]mirror{},
		retarget:  map[ktypes.NamespacedName]bool{},
		forbidden: map[string]bool{},
		moves:     map[ktypes.NamespacedName]*move{},
		wake:      make(chan struct{}, 1),
	}, nil
}

// Write implements events.Sink: create on the first write, patch after. The
// error is retryable unless it wraps events.ErrPermanent. A pod change is
// created at once, before the kubelet made its new mirror pod; Run moves it
// there.
func (s *Sink) Write(ctx context.Context, ev *v1.Event, update bool) error {
	if err := s.parkedErr(); err != nil {
		return err
	}
	if err := s.jitter(ctx); err != nil {
		return err
	}
	var err error
	if update {
		err = s.update(ctx, ev)
	} else {
		err = s.create(ctx, ev, true)
	}
	return s.classify(ev, err)
}

// jitter waits a random time up to Jitter (and at most half the time left
// to the write) when the previous write failed retryably.
func (s *Sink) jitter(ctx context.Context) error {
	s.mu.Lock()
	failing := s.failing
	s.mu.Unlock()
	if !failing {
		return nil
	}
	max := s.opts.Jitter
	if dl, ok := ctx.Deadline(); ok {
		if left := dl.Sub(s.clk.Now()) / 2; left < max {
			max = left
		}
	}
	if max <= 0 {
		return nil
	}
	t := s.clk.NewTimer(rand.N(max))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kube: waiting to retry: %w", ctx.Err())
	}
}

// update patches the Event; one the API no longer has (TTL, deleted behind
// podwatch's back, or restored from the local store) is created again with
// its full count.
func (s *Sink) update(ctx context.Context, ev *v1.Event) error {
	ns := s.namespace(ev)
	err := s.patch(ctx, ns, ev)
	if apierrors.IsNotFound(err) {
		return s.create(ctx, ev, true)
	}
	return err
}

// create creates the Event. A create the API already has (an earlier
// attempt timed out after it was stored, or a restart) becomes a patch. A
// pod change created before its new mirror pod exists is handed to Run.
func (s *Sink) create(ctx context.Context, ev *v1.Event, again bool) error {
	out, stale, wait := s.apiCopy(ctx, ev)
	err := s.createCopy(ctx, ev, out, again)
	if err == nil && wait > 0 && s.namespace(ev) == ev.Namespace {
		s.awaitMirror(ktypes.NamespacedName{Namespace: out.Namespace, Name: out.Name},
			ktypes.NamespacedName{Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name},
			ev.Reason, stale, wait)
	}
	return err
}

// createCopy is create with out, ev's apiCopy.
func (s *Sink) createCopy(ctx context.Context, ev, out *v1.Event, again bool) error {
	_, err := s.client.Events(out.Namespace).Create(ctx, out, metav1.CreateOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsAlreadyExists(err):
		// Get first: if the Event vanished in between, create it again
		// rather than fail the write on a 404 patch.
		if _, gerr := s.client.Events(out.Namespace).Get(ctx, out.Name, metav1.GetOptions{}); gerr != nil {
			if apierrors.IsNotFound(gerr) && again {
				return s.create(ctx, ev, false)
			}
			return fmt.Errorf("get after conflict: %w", gerr)
		}
		return s.patch(ctx, out.Namespace, ev)
	case out.InvolvedObject.Kind == "Pod" && namespaceGone(err):
		s.mu.Lock()
		s.retarget[ktypes.NamespacedName{Namespace: ev.Namespace, Name: ev.Name}] = true
		s.mu.Unlock()
		s.log.Info("namespace of a static pod is missing: recording its Event on the Node",
			"namespace", ev.InvolvedObject.Namespace, "pod", ev.InvolvedObject.Name, "event", ev.Name)
		if again {
			return s.create(ctx, ev, false)
		}
	}
	return err
}

// namespaceGone reports a create refused because the namespace does not
// exist or is being deleted.
func namespaceGone(err error) bool {
	if apierrors.IsNotFound(err) {
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			if d := st.Status().Details; d != nil && d.Kind == "namespaces" {
				return true
			}
		}
		return false
	}
	return apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause)
}

// patch sends the count, lastTimestamp and message (an Event says its
// latest occurrence, however worded), the change last counted on it
// (events.AnnotationChange), which a warm start reads back to recognise a
// replay, and its key (events.AnnotationKey), which an Event an earlier
// release wrote gets once this one continues it, and the claim and the
// detail of its latest occurrence (events.AnnotationClaim,
// events.AnnotationDetail). A merge patch: these are
// scalars, and the annotations are merged into the others.
func (s *Sink) patch(ctx context.Context, ns string, ev *v1.Event) error {
	msg := ev.Message
	if ns != ev.Namespace {
		msg = retargetedMessage(ev)
	}
	p := map[string]any{
		"count":         ev.Count,
		"lastTimestamp": ev.LastTimestamp,
		"message":       msg,
	}
	ann := map[string]any{}
	for _, k := range []string{events.AnnotationChange, events.AnnotationKey, events.AnnotationClaim} {
		if v, ok := ev.Annotations[k]; ok {
			ann[k] = v
		}
	}
	// The detail follows the message: an occurrence without one drops the
	// last one's (null removes it in a merge patch).
	ann[events.AnnotationDetail] = nil
	if v, ok := ev.Annotations[events.AnnotationDetail]; ok {
		ann[events.AnnotationDetail] = v
	}
	p["metadata"] = map[string]any{"annotations": ann}
	body, err := json.Marshal(p)
	if err != nil {
		return events.Permanent(fmt.Errorf("patch body: %w", err))
	}
	_, err = s.client.Events(ns).Patch(ctx, ev.Name, ktypes.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// namespace is where the Event lives in the API.
func (s *Sink) namespace(ev *v1.Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retarget[ktypes.NamespacedName{Namespace: ev.Namespace, Name: ev.Name}] {
		return metav1.NamespaceDefault
	}
	return ev.Namespace
}

// apiCopy is the Event as the API gets it: re-targeted at the Node when its
// namespace is gone, or with the mirror pod's uid. The uid is set only here,
// never in the compression key, so a mirror pod recreated with a new hash
// does not split one happening into two Events. wait is nonzero while the
// mirror pod a change makes is not there yet: how long Run looks for it to
// move the Event to, and stale the hash it is not (see mirrorFor).
func (s *Sink) apiCopy(ctx context.Context, ev *v1.Event) (out *v1.Event, stale ktypes.UID, wait time.Duration) {
	out = ev.DeepCopy()
	out.ResourceVersion = ""
	out.UID = ""
	if s.namespace(ev) != ev.Namespace {
		pod := ev.InvolvedObject.Namespace + "/" + ev.InvolvedObject.Name
		out.Namespace = metav1.NamespaceDefault
		out.InvolvedObject = events.NodeRef(s.opts.Node)
		out.Message = retargetedMessage(ev)
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnotationRetargeted] = pod
		return out, "", 0
	}
	if out.InvolvedObject.Kind == "Pod" && out.InvolvedObject.UID == "" {
		out.InvolvedObject.UID, stale, wait = s.mirrorFor(ctx, ev)
	}
	return out, stale, wait
}

// retargetedMessage is the message of ev re-targeted at the Node, which
// names the pod it is about.
func retargetedMessage(ev *v1.Event) string {
	return "pod " + ev.InvolvedObject.Namespace + "/" + ev.InvolvedObject.Name + ": " + ev.Message
}

// mirrorFor returns the uid Pod Event ev is to carry now: its mirror pod's
// config hash, which the kubelet also gives the Events it records about the
// static pod, or "" when unknown. wait is nonzero while the mirror pod the
// change ev reports makes is not there yet, and bounds Run's look for it;
// stale is the hash that pod will not have:
//
//   - the kubelet creates a static pod's mirror pod as soon as it syncs the
//     pod, so a StaticPodAdded is looked after for addedWait;
//   - after a StaticPodUpdated (a new UID) it replaces the old mirror pod
//     only when it starts the new pod, once the old one stopped, seconds
//     later or never (a restart that is stuck): while the old one is
//     there, and is neither created since the change nor of another hash
//     than the one seen before it, the update is written on it and looked
//     after for MirrorWait; with none there (a kubelet without an API
//     server, a namespace the cluster lacks, or the moment of the
//     replacement) for addedWait.
//
// Failing to read it leaves nothing to look after: the Event still shows in
// `kubectl events --for pod/NAME`.
func (s *Sink) mirrorFor(ctx context.Context, ev *v1.Event) (uid, stale ktypes.UID, wait time.Duration) {
	key := ktypes.NamespacedName{Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name}
	since := ev.FirstTimestamp.Time
	now := s.clk.Now()
	s.mu.Lock()
	old, ok := s.mirrors[key]
	s.mu.Unlock()
	// A pod found at a first start is resolved as an added one: its mirror
	// pod may be the kubelet's of long ago, or yet to come (a boot).
	added := ev.Reason == types.ReasonAdded || ev.Reason == types.ReasonFound
	change := added || ev.Reason == types.ReasonUpdated
	if !change && ok && now.Sub(old.at) < s.opts.MirrorTTL && !old.at.Before(since) {
		return old.uid, "", 0
	}
	pod, err := s.getMirror(ctx, key)
	if err != nil && !apierrors.IsNotFound(err) {
		// Forbidden, unreachable: keep what we knew.
		return old.uid, "", 0
	}
	if pod != nil {
		uid = ktypes.UID(pod.Annotations[MirrorAnnotation])
	}
	if ev.Reason == types.ReasonUpdated {
		// Creation times are whole seconds: one in the change's own second
		// may be the old pod's. The read from before the change is kept
		// until the new pod is found, to compare with.
		created := pod != nil && pod.CreationTimestamp.Time.After(since)
		before := ok && old.at.Before(since)
		switch {
		case uid == "" && before:
			return "", old.uid, addedWait
		case uid == "":
			return "", "", addedWait
		case !created && !(before && uid != old.uid):
			return uid, uid, s.opts.MirrorWait
		}
		s.remember(key, uid)
		return uid, "", 0
	}
	s.remember(key, uid)
	switch {
	case added && uid == "":
		return "", "", addedWait
	case ev.Reason == types.ReasonRemoved && uid == "":
		// The kubelet deletes the mirror pod of a removed static pod: the
		// last known hash still names it.
		return old.uid, "", 0
	}
	return uid, "", 0
}

func (s *Sink) remember(key ktypes.NamespacedName, uid ktypes.UID) {
	s.mu.Lock()
	s.mirrors[key] = mirror{uid: uid, at: s.clk.Now()}
	s.mu.Unlock()
}

// getMirror reads the mirror pod; a missing pod is (nil, NotFound).
func (s *Sink) getMirror(ctx context.Context, key ktypes.NamespacedName) (*v1.Pod, error) {
	pod, err := s.client.Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) {
			s.logForbidden("get pods", err)
		}
		return nil, err
	}
	return pod, nil
}

// classify turns an API error into what pkg/events acts on: permanent
// (dropped and counted) or retryable (backed off, count kept).
func (s *Sink) classify(ev *v1.Event, err error) error {
	now := s.clk.Now()
	s.mu.Lock()
	s.failing = err != nil && !permanent(err)
	if err == nil {
		s.refusals = 0
	}
	if err != nil && notServing(err) {
		s.downAt = now
	}
	// A server that was just down refuses every request until its RBAC
	// authorizer has synced, which takes long on a large cluster
	// (kubernetes/kubernetes#121635): such a refusal says nothing about
	// podwatch's ClusterRole, and only the Recorder's retry backoff paces it.
	warming := !s.downAt.IsZero() && now.Sub(s.downAt) < s.opts.ForbiddenPark
	s.mu.Unlock()
	if err == nil {
		return nil
	}
	err = &codedError{code: errorCode(err), err: fmt.Errorf("kube: event %s/%s: %w", ev.Namespace, ev.Name, err)}
	switch {
	case permanent(err):
		return events.Permanent(err)
	case warming && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)):
		s.log.Debug("refused by an API server that was just down, as before its RBAC has synced; not parked", "err", err)
	case apierrors.IsForbidden(err):
		s.logForbidden("write events", err)
		s.park(err)
	case apierrors.IsUnauthorized(err):
		s.logForbidden("authenticate", err)
		s.park(err)
	}
	return err
}

// notServing reports an error that says the API server is not serving:
// no answer at all, or a 5xx or 429.
func notServing(err error) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code > 0 {
		code := st.Status().Code
		return code >= http.StatusInternalServerError || code == http.StatusTooManyRequests
	}
	return !permanent(err) && !errors.Is(err, context.Canceled)
}

// park holds writes back after the API refused them: firstPark after the
// first refusal since a success, doubling with each further one, up to
// ForbiddenPark.
func (s *Sink) park(err error) {
	if s.opts.ForbiddenPark < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals++
	d := s.opts.ForbiddenPark
	if n := s.refusals - 1; n < 32 {
		d = min(d, firstPark<<n)
	}
	s.parked = s.clk.Now().Add(d)
	s.parkedBy = err
}

// parkedErr is the retryable error a write gets while writes are parked;
// it wraps the refusal, so it still reads as a 403 or 401.
func (s *Sink) parkedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parkedBy == nil || !s.clk.Now().Before(s.parked) {
		return nil
	}
	return fmt.Errorf("kube: writes held back until %s after the API refused them: %w",
		s.parked.UTC().Format(time.RFC3339), s.parkedBy)
}

// permanent reports errors no retry can fix: the API judged the Event
// itself, not the moment.
func permanent(err error) bool {
	return errors.Is(err, events.ErrPermanent) ||
		apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err)
}

// logForbidden logs a 403/401 once per cause: the write is retried with
// backoff, and logging each retry would bury the one line that says which
// RBAC rule is missing.
func (s *Sink) logForbidden(op string, err error) {
	cause := op
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if d := st.Status().Details; d != nil {
			cause += " " + d.Group + "/" + d.Kind
		}
		cause += " " + string(st.Status().Reason)
	}
	s.mu.Lock()
	seen := s.forbidden[cause]
	s.forbidden[cause] = true
	s.mu.Unlock()
	if !seen {
		s.log.Error("the Kubernetes API refused podwatch's credentials: check the ServiceAccount's ClusterRole (deploy/kubernetes/10-rbac.yaml); writes are retried with backoff and nothing is dropped while the pending queue has room",
			"op", op, "err", err)
	}
}

// codedError carries the code the metrics count sink failures by
// (events.ErrorCode): the HTTP status, or what kept the request from one.
type codedError struct {
	code string
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }
func (e *codedError) Code() string  { return e.code }

func errorCode(err error) string {
	var st apierrors.APIStatus
	var nerr net.Error
	switch {
	case errors.As(err, &st) && st.Status().Code > 0:
		return strconv.Itoa(int(st.Status().Code))
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return "timeout"
	case errors.As(err, &nerr):
		return "unreachable"
	}
	return events.CodeUnknown
}
