package diff

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// While podwatch does not know the kubelet's relist phase (no
// Snapshot.KubeletRelist), a manifest invalid for less than a relist
// period is a race: the kubelet's relist lies somewhere in each period, so
// whether it fell while the file was invalid (and stopped the pod, which
// the fix starts again) cannot be told, and podwatch's own relist falling
// there or not says nothing of it. Such a span is said at the fix as a
// restart the kubelet may make (portWindow.shortFix). A file invalid for a
// full period is another matter: some relist of the kubelet's fell within
// it, and the pod is gone at that moment, an estimate of when only.

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
}

// heldUpRead is how long before podwatch read an invalid write a relist's
// folder open may have come and the relist still have read the file after
// the write: a held-up file source reads a large folder slowly.
const heldUpRead = time.Second

// lateNear is, for a span from..to on a known phase, a held-up relist
// that may have read the folder within it (behind false), else the latest
// sign that the file source ran behind, seen no longer than behindSpan
// before the span and not after it (behind true); zero for none.
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
