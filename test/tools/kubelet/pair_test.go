//go:build linux

package kubelet_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// shadowed-deleted under CI's load: the .bak's restart, said as an
// UPDATE, the sync loop logged as a REMOVE and an ADD seconds later (one
// line folded); the delete's REMOVE, printed with an ADD, pairs with the
// delete's own line, not with that folded one, which a relist decided.
func TestPairRemovesAfterAFoldedUpdate(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 35, 10, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const pod = "judge/web-node"
	ev := func(name, reason string) v1.Event {
		return v1.Event{InvolvedObject: v1.ObjectReference{Kind: types.KindPod, Namespace: "judge", Name: "web-node"},
			Reason: reason, Count: 1, Message: "static pod " + pod + " " + name}
	}
	evs := []v1.Event{ev("a", types.ReasonAdded), ev("u", types.ReasonUpdated), ev("r", types.ReasonRemoved), ev("b", types.ReasonAdded)}
	for i := range evs {
		evs[i].Name = evs[i].Reason + "." + evs[i].Message
	}
	printed := []time.Time{at(0), at(25_000), at(45_900), at(45_920)}
	lines := []removeLine{{at: at(29_300), folded: true}, {at: at(46_200)}}
	decidedBy := func(line time.Time) decision {
		if line.Equal(at(29_300)) {
			return decision{at: at(28_070), byRelist: true}
		}
		return decision{at: line}
	}
	got := pairRemoves(evs, printed, pod, lines, decidedBy)
	if len(got) != 1 {
		t.Fatalf("%d REMOVEs paired, want 1: %+v", len(got), got)
	}
	if got[0].byRelist || got[0].delay != -300*time.Millisecond {
		t.Errorf("the delete's REMOVE paired %+v, want it 300 ms before the delete's own line, not by a relist", got[0])
	}
}
