package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// A file source held up by a busy sync loop takes a change's watch events
// in late, possibly seconds apart with a relist between, each a restart
// no count of podwatch's bounds. A change said after a sign of that says
// so (behind); one said before the first sign, while the file source was
// already held, counted its restarts. When a sign comes, each pod with
// such a change said within behindSpan of it gets one Warning that says
// the count may fall short, naming how many of its last changes it is
// about, so that whoever counts the restarts knows which.

// saidRun is a pod's changes since the first said with a bounded count
// (none when n is 0), and, for the port, the REMOVE last said of it.
type saidRun struct {
	first time.Time // when podwatch said it
	n     int       // changes of the pod said since, that one included
	ids   []uint64  // their claims' IDs
	// removed is the claim ID of the last change the port said of the
	// pod when that was a REMOVE the kubelet may skip, 0 otherwise: an
	// ADD said next where the kubelet may never have stopped the pod
	// goes with it, all or nothing (see portState.noteRemoved).
	removed uint64
}

// noteSaidIn counts a change of key's pod just emitted in the runs *said
// keeps (the port's); bounded says its claim counts the restarts on its
// way with no sign of a file source behind. A run begins only on the
// watch: a list's changes are the relist's.
func (c *computation) noteSaidIn(said *map[string]saidRun, key string, bounded bool, id uint64) {
	r := (*said)[key]
	switch {
	case r.n > 0:
		r.n++
	case bounded && !c.snap.Relist:
		r = saidRun{first: c.snapTime(), n: 1, removed: r.removed}
	default:
		return
	}
	if *said == nil {
		*said = map[string]saidRun{}
	}
	// The view's runs are its own (see cloneSaid): append in place.
	r.ids = append(r.ids, id)
	(*said)[key] = r
}

// cloneSaid copies said for a view that must leave the original as it
// was: each run's IDs too, which noteSaid appends to in place.
func cloneSaid(said map[string]saidRun) map[string]saidRun {
	out := maps.Clone(said)
	for key, r := range out {
		r.ids = slices.Clone(r.ids)
		out[key] = r
	}
	return out
}

// amendIn emits, at a sign newer than *lateSeen, the last seen, a
// ReasonMayHaveRestarted Warning for each pod whose run of changes in
// *said began within behindSpan of it, before or after (said before
// podwatch saw the sign, which dates the read that showed it); it forgets
// runs no later sign can reach.
func (c *computation) amendIn(said *map[string]saidRun, lateSeen *time.Time) {
	span := behindSpan(c.opts.RelistPeriod)
	var sign lateSign
	for _, s := range c.lateSigns() {
		if s.at.After(sign.at) {
			sign = s
		}
	}
	for key, r := range *said {
		if r.n > 0 && c.snapTime().Sub(r.first) > 2*span {
			// A sign is seen moments after the read it dates.
			forgetRun(*said, key)
		}
	}
	if !sign.at.After(*lateSeen) {
		return
	}
	*lateSeen = sign.at
	for _, key := range slices.Sorted(maps.Keys(*said)) {
		if r := (*said)[key]; r.n > 0 && r.first.Sub(sign.at).Abs() <= span {
			c.emit(c.mayHaveRestarted(key, r, sign))
			forgetRun(*said, key)
		}
	}
}

// forgetRun drops key's run of changes from said, keeping the REMOVE
// noted of it, which lives until the next change said of the pod.
func forgetRun(said map[string]saidRun, key string) {
	if r := said[key]; r.removed != 0 {
		said[key] = saidRun{removed: r.removed}
		return
	}
	delete(said, key)
}

// mayHaveRestarted is the Warning for key's run r of changes, at sign.
func (c *computation) mayHaveRestarted(key string, r saidRun, sign lateSign) types.Change {
	ran := "ran"
	if sign.may() {
		ran = "may have run"
	}
	which := "the last change podwatch said of this pod"
	if r.n > 1 {
		which = fmt.Sprintf("the last %d changes podwatch said of this pod", r.n)
	}
	file := ""
	if p, ok := c.next.Pods[key]; ok {
		file = p.File
	}
	return types.Change{
		Claim: &types.Claim{ID: c.nextClaimID(), At: types.ClaimAtWatch, Before: types.Range{}, Amends: r.ids},
		Type:  v1.EventTypeWarning, Reason: types.ReasonMayHaveRestarted, Object: podObject(key), File: file,
		Key: problemKey("may-have-restarted/"+key, "", file),
		Message: fmt.Sprintf("the kubelet may have restarted the pod more times than %s said: its file source %s behind (%s)",
			strings.TrimSuffix(which, " podwatch said of this pod"), ran, sign.short()),
		Detail: fmt.Sprintf("the kubelet's file source %s behind (%s), so it may have taken in the events of %s (since %s) seconds apart with a relist between, and restarted the pod more times than said",
			ran, sign.says(), which, r.first.UTC().Format(time.RFC3339Nano)),
	}
}
