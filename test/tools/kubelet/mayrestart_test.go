//go:build linux

package kubelet_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// A claim is one of podwatch's ADD, UPDATE or REMOVE for a pod, with the
// restarts it says the kubelet may make on the way to it: where podwatch
// cannot know whether the kubelet's watch took in a file that was there a
// moment (an editor's backup, sed's temporary file), it says the pod "may
// restart once more" (or N more times) before this. Where it read a file
// still being written, whose later write the kubelet may take in first, it
// says the kubelet "may ... skip this restart": the op may not come at all.
// Where the kubelet may have read a backup gone before podwatch read it,
// it says the backup's deletion may stop the pod until the next relist: a
// REMOVE and the relist's ADD may follow the op. Where a relist of the
// kubelet's may read the folder before its watch takes in a name's going
// and the next name that gives the pod (a rename), it says the kubelet may
// stop the pod and start it again once: the relist's op, then the going's
// REMOVE and the next event's ADD.
type claim struct {
	op      string
	mayMore int
	maySkip bool
	mayDrop bool
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
	return out
}

// mayDropRE finds a message's saying a deletion may stop the pod until
// the relist, or a going taken in after a relist may stop it once.
var mayDropRE = regexp.MustCompile(`if the kubelet read [^;]* before it went, its deletion stops the pod until the next relist|the kubelet may stop the pod and start it again once \(a race`)

// maySkipRE finds a message's saying the kubelet may make no restart for it.
var maySkipRE = regexp.MustCompile(`may [^;]*skip this restart`)

// mayRestartRE finds how many more restarts a message says the pod may make.
var mayRestartRE = regexp.MustCompile(`may restart (?:the pod )?(?:(once) more|(\d+) more times)`)

// behindRE finds a message's saying the kubelet's file source runs behind,
// so that no count bounds the restarts on the way.
var behindRE = regexp.MustCompile(`file source (?:runs|may run) behind .* restart the pod more times on the way`)

// anyMore is mayMore for a message that bounds no restart on the way.
const anyMore = 1 << 16

// mayMore is how many extra restarts msg allows: 0 unless it says "may
// restart".
func mayMore(msg string) int {
	if behindRE.MatchString(msg) {
		return anyMore
	}
	m := mayRestartRE.FindStringSubmatch(msg)
	switch {
	case m == nil:
		return 0
	case m[1] != "":
		return 1
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// amendedRE finds how many of the pod's last changes a
// StaticPodMayHaveRestarted Warning says may have made more restarts.
var amendedRE = regexp.MustCompile(`the events of the last (?:change|(\d+) changes) podwatch said of this pod`)

// podwatchSaid is what podwatch's Events say the kubelet did with the pod
// fullName, in order, each op with the restarts it says may come with it.
// An Event written again with a higher count stands for that many more. A
// StaticPodMayHaveRestarted Warning (a file source seen behind only after
// the changes were said) lifts the bound of the last changes it names.
func podwatchSaid(evs []v1.Event, fullName string) []claim {
	op := map[string]string{types.ReasonAdded: "ADD", types.ReasonUpdated: "UPDATE", types.ReasonRemoved: "REMOVE"}
	counts := map[string]int32{}
	var out []claim
	for _, ev := range evs {
		o := ev.InvolvedObject
		if o.Kind != types.KindPod || o.Namespace+"/"+o.Name != fullName {
			continue
		}
		for range ev.Count - counts[ev.Name] {
			switch {
			case op[ev.Reason] != "":
				out = append(out, claim{op[ev.Reason], mayMore(ev.Message), maySkipRE.MatchString(ev.Message), mayDropRE.MatchString(ev.Message)})
			case ev.Reason == types.ReasonMayHaveRestarted:
				for i := max(len(out)-amended(ev.Message), 0); i < len(out); i++ {
					out[i].mayMore = anyMore
				}
			}
		}
		counts[ev.Name] = max(counts[ev.Name], ev.Count)
	}
	return out
}

// amended is how many of the pod's last changes a StaticPodMayHaveRestarted
// message names; 0 when it names none.
func amended(msg string) int {
	m := amendedRE.FindStringSubmatch(msg)
	switch {
	case m == nil:
		return 0
	case m[1] == "":
		return 1
	}
	n, _ := strconv.Atoi(m[1])
	return n
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
	if s.maySkip && covers(said[1:], loop) {
		return true
	}
	// The deletion may drop the pod before the sync loop takes in the
	// UPDATE it said: the loop is then told the old pod's REMOVE alone,
	// and the relist's ADD of the new one (vim's backup read, the write
	// read and the backup deleted within milliseconds).
	if s.mayDrop && s.op == "UPDATE" && len(loop) >= 2 && loop[0] == "REMOVE" && loop[1] == "ADD" && covers(said[1:], loop[2:]) {
		return true
	}
	// at matches s at loop[k], after restarts on the way to it, up to
	// left more.
	var at func(k, left int) bool
	at = func(k, left int) bool {
		if k >= len(loop) {
			return false
		}
		if loop[k] == "UPDATE" && s.op == "REMOVE" && len(said) > 1 && said[1].op == "ADD" && covers(said[2:], loop[k+1:]) {
			return true
		}
		// A file source behind may take the change's events seconds
		// apart with a relist between, which reads a part and drops the
		// pod: the UPDATE comes as that drop and the start of the whole.
		if s.op == "UPDATE" && s.mayMore == anyMore && loop[k] == "REMOVE" && k+1 < len(loop) && loop[k+1] == "ADD" && covers(said[1:], loop[k+2:]) {
			return true
		}
		if loop[k] == s.op {
			rest := loop[k+1:]
			if covers(said[1:], rest) {
				return true
			}
			if s.mayDrop {
				if len(rest) >= 2 && rest[0] == "REMOVE" && rest[1] == "ADD" && covers(said[1:], rest[2:]) {
					return true
				}
				if len(rest) >= 1 && rest[0] == "UPDATE" && covers(said[1:], rest[1:]) {
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

// A "may restart" covers the restarts it names and no more, and only
// UPDATEs just before the op that says it.
func TestMayRestartCovers(t *testing.T) {
	u, u1, u2 := claim{"UPDATE", 0, false, false}, claim{"UPDATE", 1, false, false}, claim{"UPDATE", 2, false, false}
	add, rm2 := claim{"ADD", 0, false, false}, claim{"REMOVE", 2, false, false}
	// A half's UPDATE the kubelet may skip, and the whole's after it.
	half := claim{"UPDATE", 0, true, false}
	// vim's save: the backup may have run, and its deletion dropped the pod.
	vim := claim{"UPDATE", 1, false, true}
	// A rename: a relist between it and its events may stop the pod once.
	mv := claim{"UPDATE", 0, false, true}
	// A manifest invalid for less than a relist period and fixed, the
	// phase unknown: the kubelet may have stopped the pod in the span and
	// started it again at the fix.
	rmMay, addMay := claim{"REMOVE", 0, true, false}, claim{"ADD", 0, true, false}
	// The kubelet's file source behind: no count bounds the restarts.
	behindU, behindRm := claim{"UPDATE", anyMore, false, false}, claim{"REMOVE", anyMore, false, false}
	halfBehind := claim{"UPDATE", anyMore, true, false}
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
		// The fix after a short invalid span: the kubelet's relist fell in
		// the span (REMOVE, ADD; or the two as one UPDATE) or it did not
		// (nothing); never two restarts. With new content the fix is an
		// UPDATE that may be the REMOVE and ADD.
		{[]claim{add, rmMay, addMay}, []string{"ADD"}, true},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "REMOVE", "ADD"}, true},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "REMOVE", "ADD", "REMOVE", "ADD"}, false},
		{[]claim{add, rmMay, addMay}, []string{"ADD", "UPDATE", "UPDATE"}, false},
		{[]claim{add, mv}, []string{"ADD", "REMOVE", "ADD"}, true},
	} {
		if got := covers(tc.said, tc.loop); got != tc.want {
			t.Errorf("covers(%v, %v) = %v, want %v", tc.said, tc.loop, got, tc.want)
		}
	}
	for msg, want := range map[string]bool{
		"web.yaml: ...; read while web.yaml was still open for writing: the kubelet may read only the whole and skip this restart; the kubelet gives the pod a new UID and restarts it": true,
		"web.yaml: ...; the kubelet gives the pod a new UID and restarts it": false,
		"static pod a/b removed: web.yaml was invalid for 500ms, less than the kubelet's relist period (2s), and podwatch does not know when the kubelet relists: the kubelet may have stopped the pod at a relist while the file was invalid, and started it again at the fix; if its relist fell outside that span, the kubelet may skip this restart": true,
		"web.yaml: static pod a/b added (containers: img:1); the kubelet starts it again if a relist of its stopped it while web.yaml was invalid; if not, the pod ran on, and the kubelet may skip this restart":                                                                                                                                        true,
	} {
		if got := maySkipRE.MatchString(msg); got != want {
			t.Errorf("maySkip(%q) = %v, want %v", msg, got, want)
		}
	}
	for msg, want := range map[string]bool{
		"web.yaml: ...; if the kubelet read web.yaml~ before it went, its deletion stops the pod until the next relist starts it again; the kubelet gives the pod a new UID and restarts it":                                                                                                                                                                                                                 true,
		"static pod a/b removed: web.yaml~ was removed; the kubelet stops it, and its next relist starts it again from web.yaml":                                                                                                                                                                                                                                                                             false,
		"b.yaml: now from b.yaml (was a.yaml); the kubelet may stop the pod and start it again once (a race: a relist of its may read the folder before its watch takes in a.yaml's going); the kubelet gives the pod a new UID and restarts it":                                                                                                                                                             true,
		"web.yaml: spec.containers[0].image: img:1 -> img:2; the kubelet may stop the pod and start it again once (a race: web.yaml was invalid for 500ms, less than the kubelet's relist period (2s), and podwatch does not know when the kubelet relists; a relist within that span stopped the pod, and the fix starts it, in place of this update); the kubelet gives the pod a new UID and restarts it": true,
	} {
		if got := mayDropRE.MatchString(msg); got != want {
			t.Errorf("mayDrop(%q) = %v, want %v", msg, got, want)
		}
	}
	for msg, want := range map[string]int{
		"static pod a/b updated: ...; on the way the kubelet's watch took in x.yaml~, so it may restart the pod once more before this": 1,
		"...so it may restart the pod 2 more times before this":                                                                        2,
		"it may restart once more":               1,
		"static pod a/b updated: x.yaml changed": 0,
		"web.yaml: spec.containers[0].image: img:1 -> img:2; the kubelet gives the pod a new UID and restarts it; the kubelet's file source runs behind (its relist at 2026-12-03T11:00:00Z came late, held up by a busy sync loop), so it may take in this change's events seconds apart with a relist between, and restart the pod more times on the way":                          anyMore,
		"web.yaml: spec.containers[0].image: img:1 -> img:2; the kubelet gives the pod a new UID and restarts it; the kubelet's file source may run behind (podwatch lost sight of its relist at 2026-12-03T11:00:00Z, as when a busy sync loop holds it up), so it may take in this change's events seconds apart with a relist between, and restart the pod more times on the way": anyMore,
		"...; on the way the kubelet's watch took in x.yaml~, so it may restart the pod once more before this; the kubelet's file source runs behind (...), so it may take in this change's events seconds apart with a relist between, and restart the pod more times on the way":                                                                                                   anyMore,
	} {
		if got := mayMore(msg); got != want {
			t.Errorf("mayMore(%q) = %d, want %d", msg, got, want)
		}
	}
}

// A StaticPodMayHaveRestarted Warning lifts the bound of the changes it
// names, the pod's last ones before it, and of no other.
func TestPodwatchSaidAmended(t *testing.T) {
	const pod = "judge/web-judge-node"
	ev := func(name, reason, msg string) v1.Event {
		e := v1.Event{Reason: reason, Message: msg, Count: 1}
		e.Name = name
		e.InvolvedObject = v1.ObjectReference{Kind: types.KindPod, Namespace: "judge", Name: "web-judge-node"}
		return e
	}
	add := ev("a", types.ReasonAdded, "web.yaml: static pod judge/web-judge-node added (img:1); the kubelet takes it in on its watch")
	up1 := ev("u1", types.ReasonUpdated, "web.yaml: image: img:1 -> img:2; on the way the kubelet's watch took in web.yaml~, so it may restart the pod 2 more times before this; the kubelet gives the pod a new UID and restarts it")
	up2 := ev("u2", types.ReasonUpdated, "web.yaml: image: img:2 -> img:3; the kubelet gives the pod a new UID and restarts it")
	amend := ev("m", types.ReasonMayHaveRestarted, "the kubelet's file source may have run behind (a full read of the folder at 2026-12-04T04:26:32.51Z came less than a relist period after the one before, as a held-up relist does, or another reader's), so it may have taken in the events of the last 2 changes podwatch said of this pod (since 2026-12-04T04:26:43.3Z) seconds apart with a relist between, and restarted the pod more times than said")
	// editor-emacs-7 of a clean-clone run: five UPDATEs where podwatch
	// bounded the save at two more.
	loop := []string{"ADD", "UPDATE", "UPDATE", "UPDATE", "UPDATE", "UPDATE"}
	if said := podwatchSaid([]v1.Event{add, up1, up2}, pod); covers(said, loop) {
		t.Errorf("unamended %v covers %v", said, loop)
	}
	said := podwatchSaid([]v1.Event{add, up1, up2, amend}, pod)
	if !covers(said, loop) {
		t.Errorf("amended %v does not cover %v", said, loop)
	}
	if said[0].mayMore != 0 || said[1].mayMore != anyMore || said[2].mayMore != anyMore {
		t.Errorf("amended %v, want the last two unbounded and the ADD as it was", said)
	}
	one := amend
	one.Message = strings.Replace(amend.Message, "the last 2 changes", "the last change", 1)
	if said := podwatchSaid([]v1.Event{add, up1, up2, one}, pod); said[1].mayMore != 2 || said[2].mayMore != anyMore {
		t.Errorf("amended once: %v, want only the last UPDATE unbounded", said)
	}
}
