package follow

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// The kubelet's labels and annotation on what it asks the runtime for, as
// pkg/cri names them; repeated here so the follower does not link the
// client it is handed.
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
	annotationSource   = "kubernetes.io/config.source"
	annotationHash     = "io.kubernetes.container.hash"
)

// createdSlack is how much earlier than podwatch saw a change a sandbox or
// container may have been created and still count as the kubelet's answer
// to it: the kubelet watches the same folder and may act first.
const createdSlack = time.Second

// relistLate is how much earlier than podwatch dated a relist of the
// kubelet's it saw (by its read of the folder open, late on a busy node)
// the kubelet may have acted on it: a sandbox created that long before a
// change made at that relist may be its answer.
const relistLate = 250 * time.Millisecond

// callTimeout bounds one poll's calls to the runtime: a runtime that hangs
// must not stop the follower from reporting that it does not answer.
const callTimeout = 10 * time.Second

// Runtime is what the follower reads from the container runtime; pkg/cri's
// Client implements it. Only reads: TestRuntimeHoldsOnlyReadCalls.
type Runtime interface {
	ListPodSandbox(ctx context.Context, filter *cri.PodSandboxFilter) ([]*cri.PodSandbox, error)
	ListContainers(ctx context.Context, filter *cri.ContainerFilter) ([]*cri.Container, error)
	ContainerStatus(ctx context.Context, id string) (*cri.ContainerStatus, error)
}

// Emit records what the follower found, as a problem-like Change (no Op)
// about a pod.
type Emit func(ctx context.Context, ch types.Change)

// Observer takes what each poll found, for metrics; *metrics.Metrics
// implements it. It is told, it never calls back.
type Observer interface {
	ObserveFollow(o types.FollowObservation)
}

// Follower follows changes to the runtime. Submit may be called from any
// goroutine; everything else belongs to Run.
type Follower struct {
	opts Options
	rt   Runtime
	clk  clock.WithTicker
	log  *slog.Logger
	emit Emit
	obs  Observer // nil: nobody observes
	// mirrors reads the mirror pods, nil without an API server.
	mirrors MirrorPods
	// source names what rt reads, for the messages; sandbox names what
	// stands for the pod's sandbox in them.
	source, sandbox string
	// grain is how much earlier than the time rt gives a sandbox may have
	// been created: zero for the runtime, just under a second for mirror
	// pods, whose times are whole seconds taken as the last instant.
	grain time.Duration

	mu      sync.Mutex
	pending []types.Change
	wake    chan struct{}
	// poke: a container event came for a static pod (events.go).
	poke chan struct{}

	// Owned by Run (and by step, which Run calls).
	targets    map[string]*target // by pod key
	found      map[string]*target // found pods not yet worded, by pod key (found.go)
	static     map[string]bool    // pod keys of the published static pods
	seen       map[string]seenContainer
	primed     bool                 // seen holds a first poll's containers
	runtimeErr error                // the last poll's failure, nil when it answered
	reports    []types.FollowReport // this step's, for obs
	// backs holds, per pod key, the last pod taken back at a relist
	// podwatch did not see whose UID the follower found (judge.go).
	backs map[string]tookBack
	// mirrorDownUntil: no mirror pod is read before then, after a read
	// failed; mirrorFailing: the last read failed (logged once).
	mirrorDownUntil time.Time
	mirrorFailing   bool
}

// target is the change being followed for one pod.
type target struct {
	ch       types.Change
	at       time.Time // when the change was seen
	deadline time.Time
	// since is when the change to the pod before this one was seen, zero
	// for none: a sandbox created after it is none of the pods that ran
	// before that change.
	since time.Time
	// inPlace: metadata.uid is set and that pod already runs; restart
	// names the containers whose image changed, which must be new.
	inPlace bool
	restart map[string]bool
	// seen is what the last poll saw instead of the change done, logged
	// when it changes: what a follower that never says the change done
	// was waiting for.
	seen   string
	warned int               // NotStarted reports so far
	warnAt time.Time         // when the next one is due, once past the deadline
	cause  types.FollowCause // what the last poll saw instead, while warned
	// uid is the pod's UID as the last poll found it (the new sandbox's,
	// or metadata.uid), "" when not known: the mirror pod must have it.
	uid string
	// before are the containers that ran before an in-place update, by
	// name (classify).
	before map[string]oldContainers
}

// seenContainer is a static pod's container at the last poll, to tell a
// restart: a new attempt or a new container for the same name in the same
// sandbox.
type seenContainer struct {
	id      string
	attempt uint32
}

// New builds a follower that reads rt, reports through emit and tells obs
// (nil: nobody) what each poll found; known are the keys (namespace/name)
// of the static pods published at start, whose restarts it watches along
// with those of every pod a change names. It starts nothing until Run.
func New(opts Options, rt Runtime, clk clock.WithTicker, log *slog.Logger, emit Emit, obs Observer, known []string) *Follower {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Follower{
		opts: opts.withDefaults(), rt: rt, clk: clk, log: log, emit: emit, obs: obs,
		source:  "the container runtime",
		sandbox: "sandbox",
		wake:    make(chan struct{}, 1),
		poke:    make(chan struct{}, 1),
		targets: map[string]*target{},
		found:   map[string]*target{},
		static:  map[string]bool{},
		seen:    map[string]seenContainer{},
		backs:   map[string]tookBack{},
	}
	for _, k := range known {
		f.static[k] = true
	}
	return f
}

// Submit hands over changes the agent recorded; only ADD, UPDATE and
// REMOVE of pods are followed. It never blocks.
func (f *Follower) Submit(changes []types.Change) {
	added := false
	f.mu.Lock()
	for _, ch := range changes {
		if ch.Op != "" && ch.Object.Kind == types.KindPod {
			f.pending = append(f.pending, ch)
			added = true
		}
	}
	f.mu.Unlock()
	if added {
		select {
		case f.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// Run polls the runtime and reports until ctx ends; it returns nil then.
func (f *Follower) Run(ctx context.Context) error {
	stop := f.startEvents(ctx)
	defer stop()
	timer := f.clk.NewTimer(0)
	defer timer.Stop()
	next := f.clk.Now()
	var last time.Time // of the last poll
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.wake:
			f.take()
			now := f.clk.Now()
			if soon := soonest(next, now, f.opts.PollInterval); soon.Before(next) {
				next = soon
				resetTimer(timer, next.Sub(now))
			}
		case <-f.poke:
			now := f.clk.Now()
			if soon := pokedPoll(next, now, last, f.opts.PollInterval); soon.Before(next) {
				next = soon
				resetTimer(timer, max(next.Sub(now), 0))
			}
		case <-timer.C():
			last = f.clk.Now()
			next = f.step(ctx)
			resetTimer(timer, max(next.Sub(f.clk.Now()), 0))
		}
	}
}

// soonest is when to poll after a change arrives at now, the next poll
// being due at next: at the fast rate, not the idle one, but not at once,
// since the kubelet needs a moment to act on it.
func soonest(next, now time.Time, poll time.Duration) time.Time {
	return earliest(next, now.Add(poll))
}

func resetTimer(t clock.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C():
		default:
		}
	}
	t.Reset(d)
}

// take moves the submitted changes into the targets: a newer change to a
// pod supersedes the one followed.
func (f *Follower) take() {
	f.mu.Lock()
	pending := f.pending
	f.pending = nil
	f.mu.Unlock()
	now := f.clk.Now()
	for _, ch := range pending {
		key := ch.Object.Namespace + "/" + ch.Object.Name
		at := ch.At
		if at.IsZero() || at.After(now) {
			at = now
		}
		if ch.Reason == types.ReasonFound {
			f.takeFound(ch, at, key)
			continue
		}
		next := &target{ch: ch, at: at, deadline: at.Add(f.opts.Deadline)}
		if prev := f.targets[key]; prev != nil {
			next.since = prev.at
		}
		f.targets[key] = next
		f.log.Debug("following a change", "pod", key, "op", ch.Op, "file", ch.File, "at", at)
		if ch.Op == types.OpRemove {
			delete(f.static, key)
			delete(f.backs, key)
		} else {
			f.static[key] = true
		}
	}
}

// step reads the runtime once, judges every target and watches for
// restarts; it returns when the next poll is due.
func (f *Follower) step(ctx context.Context) time.Time {
	f.take()
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	f.scope(cctx)
	obs, err := f.observe(cctx)
	now := f.clk.Now()
	f.noteRuntime(err)
	// Restarts first: a change judged done in this step has restarted
	// containers on purpose.
	if obs != nil {
		f.watchRestarts(cctx, obs)
	}
	f.inventory(cctx, obs, now)
	for key, t := range f.targets {
		f.judge(cctx, key, t, obs, now)
	}
	f.observed(err)
	return f.nextPoll(now)
}

// observed tells the observer what this step found: the poll's error, the
// pods past their deadline by what is seen instead, and the reports.
func (f *Follower) observed(err error) {
	reports := f.reports
	f.reports = nil
	if f.obs == nil {
		return
	}
	o := types.FollowObservation{RuntimeErr: err, Reports: reports}
	for _, t := range f.targets {
		if t.warned == 0 {
			continue
		}
		if o.Overdue == nil {
			o.Overdue = map[types.FollowOverdue]int{}
		}
		reason := types.ReasonNotStarted
		if t.ch.Op == types.OpRemove {
			reason = types.ReasonNotStopped
		}
		o.Overdue[types.FollowOverdue{Reason: reason, Cause: t.cause}]++
	}
	f.obs.ObserveFollow(o)
}

// record emits ch and keeps it for the observer; took is the time to the
// outcome, for StaticPodStarted and StaticPodStopped.
func (f *Follower) record(ctx context.Context, ch types.Change, took time.Duration) {
	f.reports = append(f.reports, types.FollowReport{Reason: ch.Reason, Type: ch.Type, Took: took})
	f.emit(ctx, ch)
}

// noteRuntime logs once when the runtime stops answering and once when it
// answers again.
func (f *Follower) noteRuntime(err error) {
	switch {
	case err != nil && f.runtimeErr == nil:
		f.log.Warn(f.source+" does not answer; changes are judged when it does", "err", err)
	case err == nil && f.runtimeErr != nil:
		f.log.Info(f.source + " answers again")
	}
	f.runtimeErr = err
}

// nextPoll is soon while a change waits for its deadline, at the idle rate
// otherwise, and never later than a warning that is due.
func (f *Follower) nextPoll(now time.Time) time.Time {
	next := now.Add(f.opts.IdlePollInterval)
	for _, t := range f.found {
		next = earliest(next, now.Add(f.opts.PollInterval))
		next = earliest(next, t.deadline)
	}
	for _, t := range f.targets {
		if t.warned == 0 {
			next = earliest(next, now.Add(f.opts.PollInterval))
			next = earliest(next, t.deadline)
		} else {
			next = earliest(next, t.warnAt)
		}
	}
	return next
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// judge reports on one target when its outcome is known, or when its
// deadline (or the next repeat) passed without it.
func (f *Follower) judge(ctx context.Context, key string, t *target, obs *observation, now time.Time) {
	var done bool
	var why string
	var cause types.FollowCause
	var took time.Duration
	switch {
	case obs == nil:
		why = fmt.Sprintf("%s does not answer (%v)", f.source, f.runtimeErr)
		cause = types.CauseRuntimeUnavailable
	case t.ch.Op == types.OpRemove:
		done, why = stopped(obs, key, f.sandbox)
		cause, took = types.CauseStillRunning, now.Sub(t.at)
	default:
		done, why, cause, took = f.started(ctx, key, t, obs)
	}
	if done {
		f.report(ctx, t, true, "", took)
		delete(f.targets, key)
		return
	}
	if why == "" {
		delete(f.targets, key) // nothing to follow: the change restarts nothing
		return
	}
	t.cause = cause
	if why != t.seen {
		f.log.Debug("change not seen done yet", "pod", key, "op", t.ch.Op, "at", t.at, "seen", why)
		t.seen = why
	}
	if now.Before(t.deadline) || (t.warned > 0 && now.Before(t.warnAt)) {
		return
	}
	if t.ch.MaySkip {
		// The kubelet may rightly not have made it: no warning, as that
		// would claim it should have.
		f.log.Debug("a change the kubelet may skip is not seen done by the deadline; no warning", "pod", key, "seen", why)
		delete(f.targets, key)
		return
	}
	t.warned++
	t.warnAt = now.Add(f.opts.Deadline)
	if explained(cause) {
		why += f.kubeletSaysNotStarted(ctx, key, t)
	}
	f.report(ctx, t, false, why, 0)
}

// explained says whether the mirror pod's status can say more of a cause
// than the runtime: why a container is not created, does not run or
// exited.
func explained(c types.FollowCause) bool {
	return c == types.CauseContainerNotCreated || c == types.CauseContainerNotRunning || c == types.CauseContainerExited
}

// report emits the outcome of t.
func (f *Follower) report(ctx context.Context, t *target, ok bool, why string, took time.Duration) {
	name, file := t.ch.Object.Name, t.ch.File
	// Keyed by the change followed: an edit flipped back and forth is two
	// changes, each with the outcomes of its flips, whatever the timings
	// and causes the messages say.
	ch := types.Change{Type: v1.EventTypeNormal, Object: t.ch.Object, File: file, Key: t.ch.Key}
	switch {
	case ok && t.ch.Op == types.OpRemove:
		ch.Reason = types.ReasonStopped
		ch.Message = fmt.Sprintf("%s is stopped %s after the change to %s that removed it", name, seconds(took), file)
	case ok && t.ch.Reason == types.ReasonFound:
		// A found pod's file may be months old: timed from the start.
		ch.Reason = types.ReasonStarted
		ch.Message = fmt.Sprintf("%s runs the pod of %s %s after podwatch found it", name, file, seconds(took))
	case ok:
		ch.Reason = types.ReasonStarted
		ch.Message = fmt.Sprintf("%s runs the change from %s %s after it was written", name, file, seconds(took))
	case t.ch.Op == types.OpRemove:
		ch.Type, ch.Reason = v1.EventTypeWarning, types.ReasonNotStopped
		ch.Message = fmt.Sprintf("%s still runs %s after the change to %s that removed it (--follow-deadline): %s", name, f.opts.Deadline, file, why)
	default:
		// The message leaves out how long it has been, so that while the
		// same thing is seen the Event's count grows instead of a new
		// Event starting.
		ch.Type, ch.Reason = v1.EventTypeWarning, types.ReasonNotStarted
		ch.Message = fmt.Sprintf("%s does not run the change from %s within %s (--follow-deadline): %s", name, file, f.opts.Deadline, why)
	}
	f.record(ctx, ch, took)
}

// seconds prints a duration as a reader wants it in a message: "12.4 s"
// below a minute, "3m7.2s" above.
func seconds(d time.Duration) string {
	d = max(d, 0).Round(100 * time.Millisecond)
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.String()
}

// containerNames are the names of the pod's regular containers, from the
// published pod's "name=image" list.
func containerNames(p *types.Pod) []string {
	if p == nil {
		return nil
	}
	names := make([]string, 0, len(p.Containers))
	for _, c := range p.Containers {
		name, _, _ := strings.Cut(c, "=")
		names = append(names, name)
	}
	return names
}

func containerImages(p *types.Pod) map[string]string {
	images := map[string]string{}
	if p == nil {
		return images
	}
	for _, c := range p.Containers {
		name, image, _ := strings.Cut(c, "=")
		images[name] = image
	}
	return images
}
