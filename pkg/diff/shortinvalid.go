package diff

import (
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// While podwatch does not know the kubelet's relist phase (no
// Snapshot.KubeletRelist), its own relist stands in for the kubelet's, and
// that is a poor guess for a manifest that is invalid for less than a
// relist period: the kubelet's relist lies somewhere in each period, so
// whether it fell while the file was invalid (and stopped the pod, which
// the fix starts again) is a race either way, and podwatch's own relist
// falling there or not says nothing of it. Such a span is said at the fix
// as a restart the kubelet may make (fixed). A file invalid for a full
// period is another matter: some relist of the kubelet's fell within it,
// and the pod is gone at that moment, an estimate of when only.

// fixedSpan is a file that gave its key's pod, turned invalid at from and
// was valid again at to, giving the same key, while the phase was unknown;
// or while it was known, when a relist held up (heldUp, see
// Snapshot.KubeletHeldUp) read the folder in the span: podwatch does not
// take a late full read for the kubelet's relist (another tool's looks
// the same), so whether the kubelet's read the file invalid is a race.
type fixedSpan struct {
	file     string
	from, to time.Time
	heldUp   time.Time
	// behind: heldUp is a sign that the file source ran behind (see
	// lateSign) before the span, not a late relist within it: a file
	// source held up relists off its grid now and then, and the grid
	// then says nothing of whether a relist fell in the span (a
	// clean-clone CI run: 4 of 10 short spans stopped the pod unseen).
	behind bool
	// removeID is the claim of the REMOVE shortInvalid said for the span,
	// which the ADD at the fix goes with; 0 when none was said.
	removeID uint64
}

// heldUpRead is how long before podwatch read an invalid write a relist's
// folder open may have come and the relist still have read the file after
// the write: a held-up file source reads a large folder slowly.
const heldUpRead = time.Second

// noteInvalid follows, for the names snap changed, when a file that gives
// the store its key's pod turned invalid (invalidSince), and notes the
// fixes of such files (fixed). It runs before the step plays snap.
func (v *kubeletView) noteInvalid(snap types.Snapshot, names []string) {
	for _, name := range names {
		f := lookup(snap.Files, name)
		since, was := v.invalidSince[name]
		switch {
		case f != nil && !f.NotRegular && f.ReadErr == nil && f.Err != nil:
			key, ok := v.keys[name]
			if was || !ok || v.store[key] != name || v.empty {
				continue
			}
			if v.invalidSince == nil {
				v.invalidSince = map[string]time.Time{}
			}
			v.invalidSince[name] = f.ChangedAt
		case was:
			delete(v.invalidSince, name)
			key, ok := v.keys[name]
			if f == nil || !validPod(f) || !ok || f.Pod.Key != key || v.store[key] != name || v.empty {
				continue
			}
			fx := fixedSpan{file: name, from: since, to: f.ChangedAt}
			if !snap.KubeletRelist.IsZero() {
				fx.heldUp, fx.behind = v.lateNear(snap, since, f.ChangedAt)
				if fx.heldUp.IsZero() {
					continue // the known phase says whether a relist fell within
				}
			}
			if v.fixed == nil {
				v.fixed = map[string]fixedSpan{}
			}
			v.fixed[key] = fx
		}
	}
}

// lateNear is, for a span from..to on a known phase, a held-up relist
// that may have read the folder within it (behind false), else the latest
// sign that the file source ran behind, seen no longer than behindSpan
// before the span and not after it (behind true); zero for none.
func (v *kubeletView) lateNear(snap types.Snapshot, from, to time.Time) (at time.Time, behind bool) {
	return lateNear(snap, v.period, from, to)
}

// lateNear is kubeletView.lateNear for a relist period.
func lateNear(snap types.Snapshot, period time.Duration, from, to time.Time) (at time.Time, behind bool) {
	if h := snap.KubeletHeldUp; !h.IsZero() && h.After(from.Add(-heldUpRead)) && !h.After(to) {
		return h, false
	}
	for _, s := range []time.Time{snap.KubeletHeldUp, snap.KubeletRelistLost, snap.KubeletUneven} {
		if !s.IsZero() && !s.After(to) && from.Sub(s) <= behindSpan(period) && s.After(at) {
			at = s
		}
	}
	return at, !at.IsZero()
}

// pruneInvalid forgets the invalid files that no longer give the store
// their pod: a relist dropped it, or another file gives it now.
func (v *kubeletView) pruneInvalid() {
	for name := range v.invalidSince {
		if key, ok := v.keys[name]; !ok || v.store[key] != name || v.empty {
			delete(v.invalidSince, name)
		}
	}
}

// keepsInvalid says whether podwatch's own relist at snap, standing in for
// the kubelet's, keeps the pod name gave before it turned invalid: it has
// not been invalid for a full period, so the kubelet's relist may not have
// fallen within that time.
func (v *kubeletView) keepsInvalid(snap types.Snapshot, name string) bool {
	since, ok := v.invalidSince[name]
	return ok && snap.KubeletRelist.IsZero() && v.period > 0 && snap.Time.Sub(since) < v.period
}

// invalidPeriod says when name turned invalid, if it has been for a full
// relist period by now while the phase is unknown: the kubelet's relist
// fell within that time. Before then it asks for a recheck at the end of
// the period.
func (c *computation) invalidPeriod(name string) (time.Time, bool) {
	since, ok := c.kv.invalidSince[name]
	if !ok || !c.snap.KubeletRelist.IsZero() || c.opts.RelistPeriod <= 0 || c.snap.Single {
		return time.Time{}, false
	}
	return since, c.due(since.Add(c.opts.RelistPeriod))
}

// shortSpan is the fix of key's file after less than a relist period
// invalid, while the phase is unknown, when the pod ran on meanwhile for
// podwatch; ok false for none. A span shorter than the settle delay is an
// editor's save, said of no more than any other.
func (c *computation) shortSpan(key string) (fixedSpan, bool) {
	fx, ok := c.kv.fixed[key]
	if !ok || c.opts.RelistPeriod <= 0 || c.snap.Single {
		return fixedSpan{}, false
	}
	span := fx.to.Sub(fx.from)
	return fx, span >= c.opts.SettleDelay && span < c.opts.RelistPeriod
}

// saysFixed says whether a short span's fix is to be said this step: the
// plain and incremental paths, which say no such thing, make way.
func (c *computation) saysFixed() bool {
	for key := range c.kv.fixed {
		if _, ok := c.shortSpan(key); ok {
			return true
		}
	}
	return false
}

// race words why the kubelet may have stopped the pod in fx's span.
func (c *computation) race(fx fixedSpan) string {
	if fx.behind {
		return fmt.Sprintf("%s was invalid for %s while the kubelet's file source ran behind (a sign of it at %s: relists held up by a busy sync loop come off their grid), so a relist of its may have read the file before the fix: a race",
			fx.file, fx.to.Sub(fx.from).Round(time.Millisecond), fx.heldUp.UTC().Format(time.RFC3339Nano))
	}
	if !fx.heldUp.IsZero() {
		return fmt.Sprintf("%s was invalid for %s, and a relist of the kubelet's came late, held up by a busy sync loop, reading the folder from %s: whether it read the file before the fix is a race",
			fx.file, fx.to.Sub(fx.from).Round(time.Millisecond), fx.heldUp.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s was invalid for %s, less than the kubelet's relist period (%s), and podwatch does not know when the kubelet relists",
		fx.file, fx.to.Sub(fx.from).Round(time.Millisecond), c.opts.RelistPeriod)
}

// shortInvalid says, for each pod whose file was fixed after a short span
// with its content back the same, the REMOVE the kubelet may have made in
// the span; the ADD it may make at the fix follows from desired (see add).
// A fix with new content says it on its UPDATE (see update).
func (c *computation) shortInvalid(desired map[string]want) {
	for _, key := range slices.Sorted(maps.Keys(c.kv.fixed)) {
		fx, ok := c.shortSpan(key)
		p, had := c.next.Pods[key]
		w, wanted := desired[key]
		if !ok || !had || !wanted || w.file == nil || w.file.Name != fx.file {
			continue
		}
		if f := w.file; p.File != f.Name || p.Hash != f.Pod.Hash || (p.Config != "" && p.Config != f.Pod.Config) {
			continue // an UPDATE says it
		}
		c.ownPods()
		delete(c.next.Pods, key)
		c.claimFresh()
		c.cl.relist, c.cl.estimate = true, true // at a relist in the span, if at all
		fx.removeID = c.emit(c.spanRemove(key, fx, p.identity()))
		c.kv.fixed[key] = fx
	}
}

// fixedStarted is what the ADD after shortInvalid's REMOVE says the kubelet
// does; "" when it is no such ADD.
func (c *computation) fixedStarted(key string, f *types.File) string {
	fx, ok := c.shortSpan(key)
	if !ok || fx.file != f.Name {
		return ""
	}
	return fmt.Sprintf("the kubelet starts it again if a relist of its stopped it while %s was invalid; if not, the pod ran on, and the kubelet may skip this restart", f.Name)
}

// fixedUpdate is what an UPDATE from a file fixed after a short span adds:
// the kubelet may have stopped the pod in the span, and then starts the
// new content as a new pod; "" for none.
func (c *computation) fixedUpdate(key string, f *types.File) string {
	fx, ok := c.shortSpan(key)
	if !ok || fx.file != f.Name {
		return ""
	}
	return fmt.Sprintf("the kubelet may stop the pod and start it again once (a race: %s; a relist within that span stopped the pod, and the fix starts it, in place of this update)", c.race(fx))
}

// spanRemove is the REMOVE of key's pod, running as identity, that a
// relist of the kubelet's within fx, a short invalid span, may have made.
func (c *computation) spanRemove(key string, fx fixedSpan, identity string) types.Change {
	return types.Change{
		Op: types.OpRemove, Type: v1.EventTypeWarning, Reason: types.ReasonRemoved, Object: podObject(key), File: fx.file, At: fx.from, MaySkip: true,
		ID: changeID(key, types.OpRemove, nil), Key: transition(types.ReasonRemoved, fx.file, identity, ""),
		Message: fmt.Sprintf("%s invalid for %s: the kubelet may have stopped the pod at a relist in that span, and starts it again at the fix; if its relist fell outside it, the kubelet may skip this restart",
			fx.file, types.Span(fx.to.Sub(fx.from))),
		Detail: fmt.Sprintf("static pod %s removed: %s: the kubelet may have stopped the pod at a relist while the file was invalid, and started it again at the fix; if its relist fell outside that span, the kubelet may skip this restart",
			key, c.race(fx)),
	}
}
