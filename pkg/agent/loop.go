package agent

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/follow"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/published"
	"github.com/podwatch/podwatch/pkg/source/file"
	"github.com/podwatch/podwatch/pkg/types"
)

// persistDelay bounds how often the published state is written: a
// flapping manifest must not rewrite it on every change.
const persistDelay = time.Second

// loop holds the diff state between snapshots. One goroutine owns it.
type loop struct {
	rec     *events.Recorder
	metrics *metrics.Metrics // nil-safe
	clk     clock.WithTicker
	opts    diff.Options
	log     *slog.Logger
	state   diff.State // advanced in place; the persister gets it by Share
	snap    *types.Snapshot

	// relist is the kubelet's relist phase as last observed (Unknown
	// while detection is off): what pkg/diff times relist-bound changes by.
	relist          types.RelistPhase
	relistTolerance time.Duration
	// relistLost is when the known phase was last lost, until it is
	// known again (Snapshot.KubeletRelistLost).
	relistLost time.Time
	// uneven is when the detector last saw the kubelet's relists come
	// less than a period apart while no phase was known
	// (Snapshot.KubeletUneven).
	uneven time.Time
	// kubeletRelist is the kubelet relist the diff is told of
	// (Snapshot.KubeletRelist): the last one on a known phase, once
	// relistLag has passed since it was seen (relistT); zero while the
	// phase is not known, and podwatch's own relist stands in.
	kubeletRelist time.Time
	relistT       clock.Timer
	pending       time.Time // a relist seen, waiting for relistT
	// kubeletSeen and pendingSeen are those relists as the detector saw
	// them (the files written while they ran, what the folder held at the
	// open); nil for one known by the phase alone.
	kubeletSeen, pendingSeen *types.KubeletRelist
	// seen is the last relist the detector recognised, on a phase or not:
	// the one a period before the relist that makes the phase known.
	seen *types.KubeletRelist

	recheck clock.Timer // something waits to settle
	// stepped: the first diff, of the restored state against the first
	// list, is done, and with it the chance of a replay (see step).
	stepped bool
	dirty   bool
	saveT   clock.Timer
	saver   *published.Persister // nil without a store
	// follower is handed every change once recorded; nil without one.
	follower *follow.Follower
}

// relistLag is how long after podwatch sees the kubelet read the last
// manifest of a relist it takes the relist in: the kubelet sends what it
// read to its sync loop only after that read, the sync loop takes it when
// done with what it was doing (on a busy node, most of half a second
// later), and a REMOVE must never be said before the kubelet acts on it.
// It is at most half the phase's period, so that one relist is taken in
// before the next is seen.
const relistLag = 750 * time.Millisecond

// lagFor is relistLag for a phase of the given period.
func lagFor(period time.Duration) time.Duration {
	if period > 0 {
		return min(relistLag, period/2)
	}
	return relistLag
}

// run diffs each snapshot against the published state and records the
// changes, and follows the kubelet's relist phase, until ctx ends (nil) or
// the watched path is gone for good. relists may be nil.
func (l *loop) run(ctx context.Context, snaps <-chan types.Snapshot, relists <-chan types.RelistObservation) error {
	defer stopTimer(&l.recheck)
	defer stopTimer(&l.saveT)
	defer stopTimer(&l.relistT)
	listed := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-snaps:
			l.snap = &s
			l.metrics.ObserveSnapshot(s)
			l.step(ctx)
			if s.Relist {
				if err := l.checkUnlinked(); err != nil {
					return err
				}
			}
			if s.Relist && !listed {
				listed = true
				l.log.Info("first list of the manifests taken in", "path", l.opts.Path, "files", len(s.Files), "err", s.PathErr)
				// Decoding every manifest at start leaves a heap goal far above
				// what stays live; give that memory back once.
				debug.FreeOSMemory()
			}
		case o := <-relists:
			l.relisted(ctx, o)
		case <-timerC(l.relistT):
			l.relistT = nil
			l.takeInRelist(ctx)
		case <-timerC(l.recheck):
			l.recheck = nil
			l.step(ctx)
		case <-timerC(l.saveT):
			l.saveT = nil
			l.persist()
		}
	}
}

// takeInRelist hands the diff the relist seen relistLag ago, with what
// the detector saw written while it ran.
func (l *loop) takeInRelist(ctx context.Context) {
	if l.relist.State == types.RelistKnown {
		l.kubeletRelist, l.kubeletSeen = l.pending, l.pendingSeen
		l.step(ctx)
		// After the step: what it recorded is on the stream sinks.
		l.log.Debug("kubelet relist taken in", "path", l.opts.Path, "at", l.pending)
	}
}

// checkUnlinked ends the agent when the watched path was deleted on the
// host while a hostPath mount keeps it open: such a mount never sees the
// recreated folder, and only a restart with a fresh mount does.
func (l *loop) checkUnlinked() error {
	gone, err := file.Unlinked(l.opts.Path)
	if err != nil || !gone {
		return nil
	}
	l.log.Error("the watched path was deleted on the host and this mount will never see it again: exiting so the pod restarts with a fresh mount",
		"path", l.opts.Path)
	return fmt.Errorf("%s was deleted on the host (link count 0)", l.opts.Path)
}

func timerC(t clock.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

func stopTimer(t *clock.Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}

func (l *loop) step(ctx context.Context) {
	if l.snap == nil {
		return
	}
	now := l.clk.Now()
	changes, recheck := diff.Advance(&l.state, l.withKubelet(*l.snap), now, l.opts)
	l.metrics.ObserveChanges(changes)
	for _, ch := range changes {
		if ch.Reason == types.ReasonFound && l.follower != nil {
			// The follower words and records it once it has looked at
			// the running pods (pkg/follow, found.go).
			l.markDirty()
			continue
		}
		if err := l.rec.Record(ctx, occurrence(ch)); err != nil {
			l.log.Error("writing event failed", "reason", ch.Reason, "err", err)
		}
		if ch.Op != "" {
			l.markDirty()
		}
	}
	if l.follower != nil {
		l.follower.Submit(changes)
	}
	if !l.stepped {
		// A change the restart replays shows in this first diff, or waits
		// in it to settle. A pod neither changed nor waiting is as the state
		// on disk says, whatever its last recorded change: a later change
		// of it is a real one, even if it leads where that one did.
		l.stepped = true
		l.rec.ForgetReplays(func(obj v1.ObjectReference) bool {
			return obj.Kind == types.KindPod && l.state.Waiting(obj.Namespace+"/"+obj.Name)
		})
	}
	stopTimer(&l.recheck)
	if !recheck.IsZero() {
		l.recheck = l.clk.NewTimer(max(recheck.Sub(now), time.Millisecond))
	}
}

// withKubelet is snap with what the agent knows of the kubelet's relists,
// as the diff takes it.
func (l *loop) withKubelet(snap types.Snapshot) types.Snapshot {
	if l.relist.State == types.RelistKnown {
		snap.KubeletRelist = l.kubeletRelist
		snap.KubeletRelistNext = l.relist.NextAfter(l.kubeletRelist)
		if r := l.kubeletSeen; r != nil {
			snap.KubeletRelistRead = r.RelistRead
		}
	}
	snap.KubeletHeldUp, snap.KubeletRelistLost, snap.KubeletUneven = l.relist.HeldUp, l.relistLost, l.uneven
	return snap
}

// relisted takes what the relist detector saw, and diffs again when it
// brings a sign that the kubelet's file source runs behind: the diff
// amends the changes said just before it, which the file source may have
// taken in late.
func (l *loop) relisted(ctx context.Context, o types.RelistObservation) {
	signs := l.lateSigns()
	l.observeRelist(ctx, o)
	if l.lateSigns() != signs {
		l.step(ctx)
	}
}

// lateSigns are the signs that the kubelet's file source runs behind, as
// the diff gets them (Snapshot.KubeletHeldUp, KubeletRelistLost,
// KubeletUneven).
func (l *loop) lateSigns() [3]time.Time {
	return [3]time.Time{l.relist.HeldUp, l.relistLost, l.uneven}
}

// observeRelist takes what the relist detector saw: it logs each change
// of phase, and raises a Node Warning when a known phase is lost.
func (l *loop) observeRelist(ctx context.Context, o types.RelistObservation) {
	l.metrics.ObserveRelist(o)
	prev, before := l.relist, l.seen
	l.relist = o.Phase
	if o.Relist != nil {
		l.seen = o.Relist
	}
	if r := o.Relist; r != nil && r.Uneven {
		l.uneven = r.At
	}
	// The diff takes the phase's last relist in a moment later
	// (relistLag): also the one that made the phase known, which is not on
	// it yet, so that podwatch's own relist never stands in once it is.
	if last := o.Phase.Last; o.Phase.State == types.RelistKnown && last.After(l.pending) {
		l.pending, l.pendingSeen = last, nil
		if r := o.Relist; r != nil && r.At.Equal(last) {
			l.pendingSeen = r
		}
		if l.relistT == nil {
			l.relistT = l.clk.NewTimer(lagFor(o.Phase.Period))
		}
		if l.kubeletRelist.IsZero() {
			// The phase just became known. Its last relist is as fresh as
			// any other (the kubelet's sync loop may not have it yet) and
			// waits for relistLag like them; the one a period before it is
			// behind the kubelet, and taken in at once, so that podwatch's
			// own relist no longer stands in meanwhile. When the detector
			// saw it, what it saw goes with it: the snapshot it is taken in
			// with is a later one, which cannot tell the diff what the
			// folder held at its open.
			l.kubeletRelist, l.kubeletSeen = last.Add(-o.Phase.Period), nil
			if b := before; b != nil && b.At.Before(last) && abs(b.At.Sub(l.kubeletRelist)) <= l.relistTolerance {
				l.kubeletRelist, l.kubeletSeen = b.At, b
			}
		}
	}
	p := o.Phase
	switch p.State {
	case types.RelistKnown:
		l.relistLost = time.Time{}
	case types.RelistLost:
		l.relistLost = l.clk.Now()
	}
	switch {
	case p.State == types.RelistKnown && (prev.State != types.RelistKnown || abs(p.Period-prev.Period) > l.relistTolerance):
		l.log.Info("kubelet relist phase known", "path", l.opts.Path, "period", p.Period, "next", p.Next)
		if abs(p.Period-l.opts.RelistPeriod) > l.relistTolerance {
			l.log.Info("the kubelet relists at another period than --file-check-frequency", "path", l.opts.Path,
				"kubeletPeriod", p.Period, "fileCheckFrequency", l.opts.RelistPeriod)
		}
	case p.State == types.RelistLost:
		l.log.Warn("kubelet relist lost: the kubelet may be down or reading another folder", "path", l.opts.Path,
			"period", p.Period, "last", p.Last, "why", p.Why)
		if err := l.rec.Record(ctx, relistLost(l.opts.NodeName, l.opts.Path, p)); err != nil {
			l.log.Error("writing event failed", "reason", types.ReasonKubeletRelistLost, "err", err)
		}
	case p.State == types.RelistUnknown && prev.State != types.RelistUnknown:
		l.log.Info("kubelet relist phase unknown", "path", l.opts.Path, "why", p.Why)
	case p.State == types.RelistUnknown && p.Why != prev.Why:
		l.log.Debug("kubelet relist phase unknown", "path", l.opts.Path, "why", p.Why)
	}
}

// relistLost is the Node Warning that says, once per loss, that the
// kubelet's relist seen until then stopped.
func relistLost(node, path string, p types.RelistPhase) events.Occurrence {
	return events.Occurrence{
		Object: events.NodeRef(node), Type: v1.EventTypeWarning, Reason: types.ReasonKubeletRelistLost, Key: path,
		Message: fmt.Sprintf("the kubelet's relist of %s, every %v, has stopped: none for three periods; the kubelet may be down or reading another folder",
			path, p.Period),
		Detail: fmt.Sprintf("its last relist seen read the folder at %s", p.Last.UTC().Format(time.RFC3339)),
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func (l *loop) markDirty() {
	if l.saver == nil {
		return
	}
	l.dirty = true
	if l.saveT == nil {
		l.saveT = l.clk.NewTimer(persistDelay)
	}
}

// persist hands the published state to the persister if it changed since
// the last hand-over.
func (l *loop) persist() {
	if !l.dirty {
		return
	}
	l.saver.Save(l.state.Share())
	l.dirty = false
}

// occurrence maps a change onto the object it is about.
func occurrence(ch types.Change) events.Occurrence {
	ref := events.NodeRef(ch.Object.Name)
	if ch.Object.Kind == types.KindPod {
		ref = events.PodRef(ch.Object.Namespace, ch.Object.Name)
	}
	return events.Occurrence{Object: ref, Type: ch.Type, Reason: ch.Reason, Message: ch.Message, Detail: ch.Detail, File: ch.File, Key: ch.Key, Change: ch.ID, Claim: ch.Claim}
}
