package relist

import (
	"slices"
	"time"
)

// quick says the reads at x and at, one period of the kubelet's apart,
// make its phase at once, without cycles more: the first interval the
// tracker sees, when nothing but the kubelet can have made it. That is
// when podwatch is told the kubelet's period (a reader at any other
// period, or at none, never pairs), and
//   - neither read may be podwatch's own list (SweepOwn), and no other
//     read came between them: a backup tool or a second kubelet reading
//     the folder at another phase reads between, and leaves the phase to
//     cycles, which tell competing readers apart;
//   - no two reads came less than a period apart (less the tolerance) in
//     the cycles periods before x, the span cycles would have taken: that
//     is a file source held up (a held tick's relist follows a late one at
//     once) or another reader, and a held-up file source relists at no
//     period, one interval of which may match the period by chance;
//   - no train qualified, no phase was lost, no event was lost, and the
//     folder was observable since x: a read at another phase after a
//     known one is the kubelet held up or restarted, which cycles tell
//     apart, and a read missed while the folder could not be seen may have
//     come between.
func (t *Tracker) quick(x, at time.Time) bool {
	if t.expect <= 0 || t.held || t.ghost != nil || x.Before(t.watched) || t.mayBeOwn(x) || t.mayBeOwn(at) {
		return false
	}
	if slices.ContainsFunc(t.trains, func(tr *train) bool { return tr.qualified }) {
		return false
	}
	from := x.Add(-cycles * t.expect)
	var prev time.Time
	for _, r := range t.history {
		if r.Before(from) || t.mayBeOwn(r) {
			continue
		}
		if r.After(x) && r.Before(at) {
			return false
		}
		if !prev.IsZero() && r.Sub(prev) < t.expect-t.tol {
			return false
		}
		prev = r
	}
	return true
}

// mayBeOwn says the read at may be podwatch's own list.
func (t *Tracker) mayBeOwn(at time.Time) bool {
	_, found := slices.BinarySearchFunc(t.own, at, time.Time.Compare)
	return found
}

// remember adds at to the history, and to own when it may be podwatch's
// own list; both keep the last maxHistory reads.
func (t *Tracker) remember(at time.Time, own bool) {
	t.history = append(t.history, at)
	if n := len(t.history) - maxHistory; n > 0 {
		t.history = slices.Delete(t.history, 0, n)
	}
	if own {
		t.own = append(t.own, at)
	}
	t.own = slices.DeleteFunc(t.own, func(o time.Time) bool { return o.Before(t.history[0]) })
}
