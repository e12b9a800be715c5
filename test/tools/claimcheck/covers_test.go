package claimcheck

import (
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

func ops(s string) []string { return strings.Fields(s) }

func TestCovers(t *testing.T) {
	add := Said{Op: "ADD"}
	u := Said{Op: "UPDATE"}
	u1 := Said{Op: "UPDATE", Max: 1}
	u12 := Said{Op: "UPDATE", Min: 1, Max: 2}
	uAny := Said{Op: "UPDATE", Max: Unbounded}
	rm := Said{Op: "REMOVE"}
	rm2 := Said{Op: "REMOVE", Max: 2}
	addWay := Said{Op: "ADD", Max: 1}
	half := Said{Op: "UPDATE", MaySkip: true}
	mv := Said{Op: "UPDATE", After: 1}
	rmAfter := Said{Op: "REMOVE", After: 1}
	// A short invalid span: a REMOVE and an ADD, both or neither.
	rmMay, addMay := Said{Op: "REMOVE", MaySkip: true, ID: 10}, Said{Op: "ADD", MaySkip: true, ID: 11, With: 10}
	unlinked := addMay
	unlinked.With = 0
	for _, tc := range []struct {
		said []Said
		ops  string
		want bool
	}{
		{nil, "", true},
		{nil, "UPDATE", false},
		{[]Said{add}, "ADD", true},
		{[]Said{add}, "", false},
		{[]Said{add, u}, "ADD UPDATE", true},
		{[]Said{add, u}, "ADD UPDATE UPDATE", false},
		// A restart is an UPDATE or a REMOVE and an ADD.
		{[]Said{add, u}, "ADD REMOVE ADD", true},
		{[]Said{u}, "REMOVE ADD", true},
		{[]Said{rm, add}, "UPDATE", true},
		{[]Said{rm, add}, "REMOVE ADD", true},
		{[]Said{rm}, "REMOVE ADD", false},
		{[]Said{add, rm}, "ADD REMOVE", true},
		// Restarts on the way, within [min, max].
		{[]Said{u1}, "UPDATE", true},
		{[]Said{u1}, "UPDATE UPDATE", true},
		{[]Said{u1}, "UPDATE REMOVE ADD", true},
		{[]Said{u1}, "UPDATE UPDATE UPDATE", false},
		{[]Said{u12}, "UPDATE", false},
		{[]Said{u12}, "UPDATE UPDATE", true},
		{[]Said{u12}, "UPDATE UPDATE UPDATE", true},
		{[]Said{u12}, "UPDATE UPDATE UPDATE UPDATE", false},
		{[]Said{uAny}, "UPDATE UPDATE UPDATE UPDATE UPDATE", true},
		{[]Said{uAny}, "UPDATE REMOVE", false},
		{[]Said{rm2}, "UPDATE UPDATE REMOVE", true},
		{[]Said{rm2}, "UPDATE UPDATE UPDATE REMOVE", false},
		{[]Said{rm2}, "REMOVE ADD REMOVE", true},
		// An ADD's restarts follow the start.
		{[]Said{addWay}, "ADD UPDATE", true},
		{[]Said{addWay}, "ADD", true},
		{[]Said{addWay}, "ADD REMOVE ADD", true},
		{[]Said{addWay}, "UPDATE ADD", false},
		{[]Said{add}, "ADD UPDATE", false},
		// May skip.
		{[]Said{half, u}, "UPDATE", true},
		{[]Said{half, u}, "UPDATE UPDATE", true},
		{[]Said{half, u}, "", false},
		{[]Said{half}, "", true},
		// Returns after.
		{[]Said{mv}, "UPDATE", true},
		{[]Said{mv}, "UPDATE REMOVE ADD", true},
		{[]Said{mv}, "UPDATE UPDATE", true},
		{[]Said{mv}, "UPDATE UPDATE UPDATE", false},
		{[]Said{rmAfter}, "REMOVE ADD REMOVE", true},
		{[]Said{rmAfter}, "UPDATE REMOVE", true},
		{[]Said{rmAfter}, "REMOVE ADD", false},
		// All or nothing: the REMOVE alone is never claimed, nor the ADD.
		{[]Said{rmMay, addMay}, "", true},
		{[]Said{rmMay, addMay}, "REMOVE ADD", true},
		{[]Said{rmMay, addMay}, "UPDATE", true},
		{[]Said{rmMay, addMay}, "REMOVE", false},
		{[]Said{rmMay, addMay}, "REMOVE ADD REMOVE ADD", false},
		{[]Said{rmMay, unlinked}, "REMOVE", true},
		{[]Said{add, rmMay, addMay, u}, "ADD UPDATE", true},
		{[]Said{add, rmMay, addMay, u}, "ADD UPDATE UPDATE", true},
		{[]Said{add, rmMay, addMay, u}, "ADD REMOVE", false},
		// A change skipped leaves the pod as it was for the next.
		{[]Said{{Op: "ADD", MaySkip: true}, uAny}, "ADD", true},
		{[]Said{{Op: "ADD", MaySkip: true}, u}, "ADD UPDATE", true},
		{[]Said{{Op: "ADD", MaySkip: true}, u}, "ADD UPDATE UPDATE", false},
		{[]Said{{Op: "REMOVE", MaySkip: true}, add}, "UPDATE", true},
		{[]Said{{Op: "REMOVE", MaySkip: true}, add}, "", true},
		{[]Said{{Op: "ADD", MaySkip: true}, rm}, "", true},
		{[]Said{{Op: "ADD", MaySkip: true}, rm2}, "ADD REMOVE", true},
		{[]Said{{Op: "ADD", MaySkip: true}, rm}, "ADD UPDATE REMOVE", false},
	} {
		if got := Covers(tc.said, ops(tc.ops)); got != tc.want {
			t.Errorf("Covers(%v, %q) = %v, want %v", tc.said, tc.ops, got, tc.want)
		}
	}
}

// CoversFrom starts from the kubelet's start: an UPDATE of a pod that
// did not run is its start.
func TestCoversFrom(t *testing.T) {
	u := []Said{{Op: "UPDATE"}}
	if CoversFrom(u, []string{"UPDATE"}, false) || !CoversFrom(u, []string{"UPDATE"}, true) || !CoversFrom(u, []string{"ADD"}, false) {
		t.Errorf("an UPDATE is not judged from where the pod started")
	}
	if !CoversFrom([]Said{{Op: "REMOVE", MaySkip: true}}, nil, true) || CoversFrom([]Said{{Op: "REMOVE"}}, nil, true) {
		t.Errorf("a REMOVE the kubelet did not make is covered only when it may be skipped")
	}
}

func TestNormal(t *testing.T) {
	got := strings.Join(Normal(ops("ADD REMOVE ADD UPDATE REMOVE REMOVE ADD REMOVE")), " ")
	if want := "ADD UPDATE UPDATE REMOVE UPDATE REMOVE"; got != want {
		t.Errorf("Normal = %q, want %q", got, want)
	}
}

func TestFromClaimAndAmend(t *testing.T) {
	c := types.Claim{ID: 4, Op: types.OpUpdate, Before: types.Bounded(1, 3), MaySkip: true, After: types.After{Max: 1}, With: 3}
	s := FromClaim(c)
	if want := (Said{Op: "UPDATE", Min: 1, Max: 3, MaySkip: true, After: 1, ID: 4, With: 3}); s != want {
		t.Fatalf("FromClaim = %+v, want %+v", s, want)
	}
	c.Before.Max = nil
	if FromClaim(c).Max != Unbounded {
		t.Errorf("a null before.max is not Unbounded")
	}
	said := []Said{{Op: "ADD", ID: 1}, s}
	Amend(said, []uint64{4})
	if said[0].Max != 0 || said[1].Max != Unbounded {
		t.Errorf("amended %v, want only #4 unbounded", said)
	}
}

func TestMiss(t *testing.T) {
	for _, tc := range []struct {
		said []Said
		ops  string
		want string
	}{
		{[]Said{{Op: "UPDATE"}}, "REMOVE ADD REMOVE ADD", "more"},
		{[]Said{{Op: "ADD"}, {Op: "UPDATE", Min: 1, Max: 1}}, "ADD UPDATE", "fewer"},
		{[]Said{{Op: "ADD"}}, "REMOVE", "other"},
		{[]Said{{Op: "UPDATE", Max: Unbounded}}, "UPDATE REMOVE", "other"},
	} {
		if got := Miss(tc.said, ops(tc.ops)); got != tc.want {
			t.Errorf("Miss(%v, %q) = %s, want %s", tc.said, tc.ops, got, tc.want)
		}
	}
}
