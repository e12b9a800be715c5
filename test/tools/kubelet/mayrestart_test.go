//go:build linux

package kubelet_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// A claim is one of podwatch's ADD, UPDATE or REMOVE for a pod, with the
// restarts it says the kubelet may make on the way to it: where podwatch
// cannot know whether the kubelet's watch took in a file that was there a
// moment (an editor's backup, sed's temporary file), it says the pod "may
// restart once more" (or N more times) before this.
type claim struct {
	op      string
	mayMore int
}

func (s claim) String() string {
	if s.mayMore == 0 {
		return s.op
	}
	return fmt.Sprintf("%s (<=%d more before)", s.op, s.mayMore)
}

// mayRestartRE finds how many more restarts a message says the pod may make.
var mayRestartRE = regexp.MustCompile(`may restart (?:the pod )?(?:(once) more|(\d+) more times)`)

// mayMore is how many extra restarts msg allows: 0 unless it says "may
// restart".
func mayMore(msg string) int {
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

// podwatchSaid is podwatchOps with each op's allowance of extra restarts.
func podwatchSaid(evs []v1.Event, fullName string) []claim {
	op := map[string]string{types.ReasonAdded: "ADD", types.ReasonUpdated: "UPDATE", types.ReasonRemoved: "REMOVE"}
	counts := map[string]int32{}
	var out []claim
	for _, ev := range evs {
		o := ev.InvolvedObject
		if o.Kind != types.KindPod || o.Namespace+"/"+o.Name != fullName || op[ev.Reason] == "" {
			continue
		}
		for range ev.Count - counts[ev.Name] {
			out = append(out, claim{op[ev.Reason], mayMore(ev.Message)})
		}
		counts[ev.Name] = max(counts[ev.Name], ev.Count)
	}
	return out
}

// covers reports whether what podwatch said accounts for what the
// kubelet's sync loop was told, in order: each of podwatch's ops matches
// one of the kubelet's, which may come after up to mayMore UPDATEs of the
// kubelet's that podwatch said may happen on the way to it, and no more.
func covers(said []claim, loop []string) bool {
	if len(said) == 0 {
		return len(loop) == 0
	}
	s := said[0]
	for k := 0; k <= s.mayMore && k < len(loop); k++ {
		if k > 0 && loop[k-1] != "UPDATE" {
			return false
		}
		if loop[k] == s.op && covers(said[1:], loop[k+1:]) {
			return true
		}
	}
	return false
}

// A "may restart" covers the restarts it names and no more, and only
// UPDATEs just before the op that says it.
func TestMayRestartCovers(t *testing.T) {
	u, u1, u2 := claim{"UPDATE", 0}, claim{"UPDATE", 1}, claim{"UPDATE", 2}
	add, rm2 := claim{"ADD", 0}, claim{"REMOVE", 2}
	for _, tc := range []struct {
		said []claim
		loop []string
		want bool
	}{
		{[]claim{add, u}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, u}, []string{"ADD", "UPDATE", "UPDATE"}, false},
		{[]claim{add, u1}, []string{"ADD", "UPDATE"}, true},
		{[]claim{add, u1}, []string{"ADD", "UPDATE", "UPDATE"}, true},
		{[]claim{add, u1}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, false},
		{[]claim{add, u2}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, u1, u}, []string{"ADD", "UPDATE", "UPDATE", "UPDATE"}, true},
		{[]claim{add, rm2}, []string{"ADD", "UPDATE", "UPDATE", "REMOVE"}, true},
		{[]claim{add, rm2}, []string{"ADD", "UPDATE", "REMOVE", "ADD", "REMOVE"}, false},
		{[]claim{add, u1}, []string{"ADD", "REMOVE", "UPDATE"}, false},
		{[]claim{add, u1}, []string{"ADD"}, false},
	} {
		if got := covers(tc.said, tc.loop); got != tc.want {
			t.Errorf("covers(%v, %v) = %v, want %v", tc.said, tc.loop, got, tc.want)
		}
	}
	for msg, want := range map[string]int{
		"static pod a/b updated: ...; on the way the kubelet's watch took in x.yaml~, so it may restart the pod once more before this": 1,
		"...so it may restart the pod 2 more times before this":                                                                        2,
		"it may restart once more":               1,
		"static pod a/b updated: x.yaml changed": 0,
	} {
		if got := mayMore(msg); got != want {
			t.Errorf("mayMore(%q) = %d, want %d", msg, got, want)
		}
	}
}
