//go:build linux

package kubelet_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
)

// A claim is one of podwatch's ADD, UPDATE or REMOVE for a pod, as its
// Event's podwatch.io/claim says it (types.Claim), in the judge's terms:
// the UPDATEs the kubelet may make on the way to it (its before.max;
// anyMore when null), whether it may make none of it (maySkip), whether a
// REMOVE and an ADD may follow it (after.max), its ID, and the ID of the
// change it is all-or-nothing with (with: the ADD of a short invalid span,
// of a relist that raced a write, or of a relist's bounce, names its
// REMOVE; the kubelet makes both or neither).
type claim struct {
	op       string
	mayMore  int
	maySkip  bool
	mayDrop  bool
	id, with uint64
}

func (s claim) String() string {
	out := s.op
	if s.mayMore > 0 {
		if s.mayMore == anyMore {
			out += " (more before)"
		} else {
			out += fmt.Sprintf(" (<=%d more before)", s.mayMore)
		}
	}
	if s.maySkip {
		out += "?"
	}
	if s.mayDrop {
		out += " (then REMOVE, ADD?)"
	}
	if s.with != 0 {
		out += " (with the last)"
	}
	return out
}

// anyMore is mayMore for a claim that bounds no restart on the way.
const anyMore = 1 << 16

// claimOf is the judge's reading of c.
func claimOf(c types.Claim) claim {
	more := anyMore
	if c.Before.Max != nil {
		more = *c.Before.Max
	}
	return claim{op: string(c.Op), mayMore: more, maySkip: c.MaySkip, mayDrop: c.After.Max > 0, id: c.ID, with: c.With}
}

// eventClaim decodes ev's podwatch.io/claim; ok is false when it has none.
func eventClaim(ev v1.Event) (types.Claim, bool) {
	raw, ok := ev.Annotations[events.AnnotationClaim]
	if !ok {
		return types.Claim{}, false
	}
	var c types.Claim
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return types.Claim{}, false
	}
	return c, true
}

// podwatchSaid is what podwatch's Events say the kubelet did with the pod
// fullName, in order: each change's claim, read from the -o json stream,
// where each line is one occurrence with its own claim. An Event written
// again with a higher count stands for that many more. A
// StaticPodMayHaveRestarted (a file source seen behind only after the
// changes were said) lifts the bound of the changes it amends, by ID. A
// change printed without a claim counts as one that allows nothing more
// (and TestRunChangesCarryClaims, in test/e2e, fails for it).
func podwatchSaid(evs []v1.Event, fullName string) []claim {
	op := map[string]string{types.ReasonAdded: "ADD", types.ReasonUpdated: "UPDATE", types.ReasonRemoved: "REMOVE"}
	counts := map[string]int32{}
	var out []claim
	for _, ev := range evs {
		o := ev.InvolvedObject
		if o.Kind != types.KindPod || o.Namespace+"/"+o.Name != fullName {
			continue
		}
		c, ok := eventClaim(ev)
		for range ev.Count - counts[ev.Name] {
			switch {
			case op[ev.Reason] != "" && ok:
				out = append(out, claimOf(c))
			case op[ev.Reason] != "":
				out = append(out, claim{op: op[ev.Reason]})
			case ev.Reason == types.ReasonMayHaveRestarted && ok:
				for i := range out {
					if slices.Contains(c.Amends, out[i].id) {
						out[i].mayMore = anyMore
					}
				}
			}
		}
		counts[ev.Name] = max(counts[ev.Name], ev.Count)
	}
	return out
}

// covers reports whether what podwatch said accounts for what the
// kubelet's sync loop was told, in order: each of podwatch's ops matches
// one of the kubelet's, which may come after up to mayMore UPDATEs of the
// kubelet's that podwatch said may happen on the way to it, and no more;
// an op podwatch said the kubelet may skip may match none, and one it said
// a deletion may follow may be followed by a REMOVE and an ADD (or the two
// as one UPDATE, when the sync loop takes them within a second). An UPDATE
// said with the file source behind may come as a REMOVE and an ADD. For that
// same reason a REMOVE podwatch said, and the ADD it said next, may match
// one UPDATE of the kubelet's: decided reads a REMOVE and an ADD line
// within a second as one, and a pod dropped on a watch event just before
// a relist that starts it again from another file (a new UID) gives just
// those two lines, close together on a loaded sync loop.
func covers(said []claim, loop []string) bool {
	if len(said) == 0 {
		return len(loop) == 0
	}
	s := said[0]
	// Skipped, it takes the change all-or-nothing with it along.
	if skipped := said[1:]; s.maySkip {
		if paired(said) {
			skipped = said[2:]
		}
		if covers(skipped, loop) {
			return true
		}
	}
	// The deletion may drop the pod before the sync loop takes in the
	// UPDATE it said: the loop is then told the old pod's REMOVE alone,
	// and the relist's ADD of the new one (vim's backup read, the write
	// read and the backup deleted within milliseconds).
	if s.mayDrop && s.op == "UPDATE" && len(loop) >= 2 && loop[0] == "REMOVE" && loop[1] == "ADD" && covers(made(said), loop[2:]) {
		return true
	}
	// at matches s at loop[k], after restarts on the way to it, up to
	// left more.
	var at func(k, left int) bool
	at = func(k, left int) bool {
		if k >= len(loop) {
			return false
		}
		if loop[k] == "UPDATE" && s.op == "REMOVE" && len(said) > 1 && said[1].op == "ADD" && started(said[2:], loop[k+1:], said[1].mayMore) {
			return true
		}
		// A file source behind may take the change's events seconds
		// apart with a relist between, which reads a part and drops the
		// pod: the UPDATE comes as that drop and the start of the whole.
		if s.op == "UPDATE" && s.mayMore == anyMore && loop[k] == "REMOVE" && k+1 < len(loop) && loop[k+1] == "ADD" && covers(made(said), loop[k+2:]) {
			return true
		}
		if loop[k] == s.op {
			rest := loop[k+1:]
			if covers(made(said), rest) || (s.op == "ADD" && started(made(said), rest, left)) {
				return true
			}
			if s.mayDrop {
				if len(rest) >= 2 && rest[0] == "REMOVE" && rest[1] == "ADD" && covers(made(said), rest[2:]) {
					return true
				}
				if len(rest) >= 1 && rest[0] == "UPDATE" && covers(made(said), rest[1:]) {
					return true
				}
			}
		}
		if left == 0 {
			return false
		}
		switch {
		case loop[k] == "UPDATE":
			return at(k+1, left-1)
		case s.mayMore == anyMore && loop[k] == "REMOVE" && k+1 < len(loop) && loop[k+1] == "ADD":
			// A file source behind restarts the pod on the way in any
			// way: a drop and a start seconds apart are a restart too.
			return at(k+2, left-1)
		}
		return false
	}
	return at(0, s.mayMore)
}

// started says next covers rest after up to n UPDATEs: an ADD's restarts
// on the way come after its start, the kubelet having started a version
// before the one said and restarted it (claimcheck's expansion of an ADD).
func started(next []claim, rest []string, n int) bool {
	for j := 0; ; j++ {
		if covers(next, rest[j:]) {
			return true
		}
		if j >= n || j >= len(rest) || rest[j] != "UPDATE" {
			return false
		}
	}
}

// paired says said[1] is all-or-nothing with said[0] (claim.with).
func paired(said []claim) bool {
	return len(said) > 1 && said[1].with != 0 && said[1].with == said[0].id
}

// made is what follows said[0] once the kubelet made it: a change
// all-or-nothing with it is then one it makes too.
func made(said []claim) []claim {
	rest := said[1:]
	if paired(said) && rest[0].maySkip {
		rest = slices.Clone(rest)
		rest[0].maySkip = false
	}
	return rest
}

// A "may restart" covers the restarts it names and no more, and only
// UPDATEs just before the op that says it.
func TestMayRestartCovers(t *testing.T) {
	u, u1, u2 := claim{"UPDATE", 0, false, false, 0, 0}, claim{"UPDATE", 1, false, false, 0, 0}, claim{"UPDATE", 2, false, false, 0, 0}
	add, rm2 := claim{"ADD", 0, false, false, 0, 0}, claim{"REMOVE", 2, false, false, 0, 0}
	u1add := claim{"ADD", 1, false, false, 0, 0}
	// A half's UPDATE the kubelet may skip, and the whole's after it.
	half := claim{"UPDATE", 0, true, false, 0, 0}
	// vim's save: the backup may have run, and its deletion dropped the pod.
	vim := claim{"UPDATE", 1, false, true, 0, 0}
	// A rename: a relist between it and its events may stop the pod once.
	mv := claim{"UPDATE", 0, false, true, 0, 0}
	// A manifest invalid for less than a relist period and fixed, the
	// phase unknown: the kubelet may have stopped the pod in the span and
	// started it again at the fix.
	rmMay, addMay := claim{"REMOVE", 0, true, false, 10, 0}, claim{"ADD", 0, true, false, 11, 10}
	// The kubelet's file source behind: no count bounds the restarts.
	behindU, behindRm := claim{"UPDATE", anyMore, false, false, 0, 0}, claim{"REMOVE", anyMore, false, false, 0, 0}
	halfBehind := claim{"UPDATE", anyMore, true, false, 0, 0}
	for _, tc := range []struct {
		said []claim
		loop []string
		want bool
	}{
		{[]claim{add, u}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, u}, []string{"ADD", "UPDATE", "UPDATE"}, false},
		// A kubelet behind: emacs's save, each event a relist apart.
		{[]claim{add, u, u, behindRm, add}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, behindU}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, behindU}, []string{"ADD", "UPDATE", "REMOVE"}, false},
		// chunked-slow with the file source behind: a relist read a part
		// and dropped the pod, and the whole started it seconds later;
		// not without the hedge, nor with a restart more.
		{[]claim{add, halfBehind, behindU}, []string{"ADD", "REMOVE", "ADD"}, true},
		{[]claim{add, behindU}, []string{"ADD", "REMOVE", "ADD"}, true},
		{[]claim{add, half, u}, []string{"ADD", "REMOVE", "ADD"}, false},
		{[]claim{add, behindU}, []string{"ADD", "REMOVE", "ADD", "REMOVE"}, false},
		// editor-emacs with the file source behind: a drop on the way
		// and the start a relist made seconds later.
		{[]claim{add, behindU, behindU}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE", "REMOVE", "ADD", "UPDATE"}, true},
		{[]claim{add, u2, u}, []string{"ADD", "UPDATE", "UPDATE", "REMOVE", "ADD", "UPDATE"}, false},
		{[]claim{add, u1}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, u1}, []string{"ADD", "UPDATE", "UPDATE"}, true},
		{[]claim{add, u1}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, false},
		{[]claim{add, u2}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, u1, u}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, rm2}, []string{"ADD", "UPDATE", "UPDATE", "REMOVE"}, true},
		{[]claim{add, rm2}, []string{"ADD", "UPDATE", "REMOVE", "ADD", "REMOVE"}, false},
		{[]claim{add, u1}, []string{"ADD", "REMOVE", "UPDATE"}, false},
		{[]claim{add, u1}, []string{"ADD"}, false},
		{[]claim{add, half, u}, []string{"ADD", "UPDATE", "UPDATE"}, true},
		{[]claim{add, half, u}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, half, u}, []string{"ADD"}, false},
		{[]claim{add, half, u}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, false},
		{[]claim{add, half}, []string{"ADD", "REMOVE"}, false},
		{[]claim{add, vim}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, vim}, []string{"ADD", "UPDATE", "UPDATE", "REMOVE", "ADD"}, true},
		{[]claim{add, vim}, []string{"ADD", "UPDATE", "REMOVE", "ADD"}, true},
		{[]claim{add, vim}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, vim}, []string{"ADD", "UPDATE", "REMOVE"}, false},
		{[]claim{add, vim}, []string{"ADD", "UPDATE", "REMOVE", "ADD", "REMOVE", "ADD"}, false},
		// The drop before the sync loop took in the UPDATE: the old pod's
		// REMOVE, the relist's ADD; not without the drop said.
		{[]claim{add, vim}, []string{"ADD", "REMOVE", "ADD"}, true},
		{[]claim{add, u1}, []string{"ADD", "REMOVE", "ADD"}, false},
		{[]claim{add, vim}, []string{"ADD", "REMOVE", "ADD", "REMOVE", "ADD"}, false},
		{[]claim{add, u1}, []string{"ADD", "UPDATE", "UPDATE", "REMOVE", "ADD"}, false},
		// A rename the kubelet's relist read before its watch took in the
		// events: the relist's UPDATE, then the old name's REMOVE and the
		// new name's ADD, or the two as one UPDATE; a second pair is more.
		{[]claim{add, mv}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, mv}, []string{"ADD", "UPDATE", "REMOVE", "ADD"}, true},
		{[]claim{add, mv}, []string{"ADD", "UPDATE", "UPDATE"}, true},
		{[]claim{add, mv}, []string{"ADD", "UPDATE", "REMOVE", "ADD", "REMOVE", "ADD"}, false},
		{[]claim{add, mv}, []string{"ADD", "REMOVE", "ADD", "UPDATE"}, false},
		// emacs's auto-save deleted at the save: the drop and the relist's
		// ADD a moment later, taken by the sync loop as one.
		{[]claim{add, rm2, add}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, rm2, add}, []string{"ADD", "UPDATE", "UPDATE", "REMOVE", "ADD"}, true},
		{[]claim{add, rm2, add}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE", "UPDATE"}, false},
		{[]claim{add, rm2}, []string{"ADD", "UPDATE"}, false},
		// An ADD's restarts on the way come after its start, also where
		// the sync loop took it with the REMOVE before it as one UPDATE:
		// vim's backup and the write run, the backup's deletion dropped
		// the pod, the relist started it again.
		{[]claim{add, {"REMOVE", 0, false, true, 0, 0}, {"ADD", anyMore, true, false, 0, 0}}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, {"REMOVE", 0, false, false, 0, 0}, u1add}, []string{"ADD", "UPDATE", "UPDATE"}, true},
		{[]claim{add, {"REMOVE", 0, false, false, 0, 0}, u1add}, []string{"ADD", "REMOVE", "ADD", "UPDATE"}, true},
		{[]claim{add, {"REMOVE", 0, false, false, 0, 0}, u1add}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, false},
		{[]claim{add, {"REMOVE", 0, false, false, 0, 0}, add}, []string{"ADD", "UPDATE", "UPDATE"}, false},
		{[]claim{add, {"REMOVE", 0, false, false, 0, 0}, add}, []string{"ADD", "REMOVE", "ADD", "UPDATE"}, false},
		// The fix after a short invalid span: the kubelet's relist fell in
		// the span (REMOVE, ADD; or the two as one UPDATE) or it did not
		// (nothing); never two restarts. With new content the fix is an
		// UPDATE that may be the REMOVE and ADD.
		{[]claim{add, rmMay, addMay}, []string{"ADD"}, true},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "REMOVE", "ADD"}, true},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "REMOVE", "ADD", "REMOVE", "ADD"}, false},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "UPDATE", "UPDATE"}, false},
		// The pair is all or nothing: the REMOVE alone was never claimed,
		// nor the ADD alone.
		{[]claim{add, rmMay, addMay}, []string{"ADD", "REMOVE"}, false},
		{[]claim{add, rmMay, addMay, rmMay}, []string{"ADD", "REMOVE", "REMOVE"}, false},
		{[]claim{add, mv}, []string{"ADD", "REMOVE", "ADD"}, true},
	} {
		if got := covers(tc.said, tc.loop); got != tc.want {
			t.Errorf("covers(%v, %v) = %v, want %v", tc.said, tc.loop, got, tc.want)
		}
	}
}

// Without the link between the two, the same claims cover a REMOVE alone:
// it is the link that makes the judge catch it.
func TestCoversUnpairedAcceptsTheRemoveAlone(t *testing.T) {
	add := claim{"ADD", 0, false, false, 1, 0}
	rm, addBack := claim{"REMOVE", 0, true, false, 2, 0}, claim{"ADD", 0, true, false, 3, 2}
	loop := []string{"ADD", "REMOVE"}
	if covers([]claim{add, rm, addBack}, loop) {
		t.Errorf("the linked pair covers %v", loop)
	}
	addBack.with = 0
	if !covers([]claim{add, rm, addBack}, loop) {
		t.Errorf("the unlinked pair does not cover %v: the test shows nothing", loop)
	}
}

// podwatchSaid reads each change's claim from its Event, one per
// occurrence, and a StaticPodMayHaveRestarted lifts the bound of the
// changes it amends, by ID, and of no other.
func TestPodwatchSaidReadsClaims(t *testing.T) {
	const pod = "judge/web-judge-node"
	ev := func(name, reason string, count int32, c types.Claim) v1.Event {
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		e := v1.Event{Reason: reason, Message: "words the judge does not read", Count: count}
		e.Name = name
		e.Annotations = map[string]string{events.AnnotationClaim: string(raw)}
		e.InvolvedObject = v1.ObjectReference{Kind: types.KindPod, Namespace: "judge", Name: "web-judge-node"}
		return e
	}
	add := ev("a", types.ReasonAdded, 1, types.Claim{ID: 1, Op: types.OpAdd, Before: types.Bounded(0, 0)})
	up1 := ev("u1", types.ReasonUpdated, 1, types.Claim{ID: 2, Op: types.OpUpdate, Before: types.Bounded(0, 2), After: types.After{Max: 1}})
	up2 := ev("u2", types.ReasonUpdated, 1, types.Claim{ID: 3, Op: types.OpUpdate, Before: types.Bounded(0, 0), MaySkip: true})
	rm := ev("r", types.ReasonRemoved, 1, types.Claim{ID: 4, Op: types.OpRemove, Before: types.Bounded(0, 0), MaySkip: true})
	back := ev("a", types.ReasonAdded, 2, types.Claim{ID: 5, Op: types.OpAdd, Before: types.Bounded(0, 0), MaySkip: true, With: 4})
	said := podwatchSaid([]v1.Event{add, up1, up2, rm, back}, pod)
	want := []claim{{"ADD", 0, false, false, 1, 0}, {"UPDATE", 2, false, true, 2, 0}, {"UPDATE", 0, true, false, 3, 0},
		{"REMOVE", 0, true, false, 4, 0}, {"ADD", 0, true, false, 5, 4}}
	if !slices.Equal(said, want) {
		t.Fatalf("said %v\nwant %v", said, want)
	}
	// editor-emacs-7 of a clean-clone run: five UPDATEs where podwatch
	// bounded the save at two more, until the amendment.
	up1 = ev("u1", types.ReasonUpdated, 1, types.Claim{ID: 2, Op: types.OpUpdate, Before: types.Bounded(0, 2)})
	loop := []string{"ADD", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE"}
	if said := podwatchSaid([]v1.Event{add, up1, up2}, pod); covers(said, loop) {
		t.Errorf("unamended %v covers %v", said, loop)
	}
	amend := ev("m", types.ReasonMayHaveRestarted, 1, types.Claim{ID: 6, Before: types.Range{}, Amends: []uint64{2, 3}})
	said = podwatchSaid([]v1.Event{add, up1, up2, amend}, pod)
	if said[0].mayMore != 0 || said[1].mayMore != anyMore || said[2].mayMore != anyMore {
		t.Errorf("amended %v, want the two UPDATEs unbounded and the ADD as it was", said)
	}
	if !covers(said, loop) {
		t.Errorf("amended %v does not cover %v", said, loop)
	}
	one := ev("m", types.ReasonMayHaveRestarted, 1, types.Claim{ID: 6, Before: types.Range{}, Amends: []uint64{3}})
	if said := podwatchSaid([]v1.Event{add, up1, up2, one}, pod); said[1].mayMore != 2 || said[2].mayMore != anyMore {
		t.Errorf("amended once: %v, want only the last UPDATE unbounded", said)
	}
}
