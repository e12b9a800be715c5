package diff

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// want is what a test asserts of a claim: max -1 for no bound on the
// restarts on the way; with -1 for "some earlier change", checked apart.
type claimWant struct {
	op       types.Op
	at       types.ClaimAt
	min, max int
	skip     bool
	after    int
	estimate bool
}

func (w claimWant) String() string {
	return fmt.Sprintf("%s at %s before [%d,%d] skip %v after %d estimate %v", w.op, w.at, w.min, w.max, w.skip, w.after, w.estimate)
}

// gotClaim is ch's claim as a claimWant, failing the test when it has none.
func gotClaim(t *testing.T, ch types.Change) claimWant {
	t.Helper()
	cl := ch.Claim
	if cl == nil {
		t.Fatalf("%s %s has no claim: %q", ch.Op, ch.Reason, ch.Message)
	}
	if cl.ID == 0 {
		t.Fatalf("%s %s claim has no ID", ch.Op, ch.Reason)
	}
	max := -1
	if cl.Before.Max != nil {
		max = *cl.Before.Max
	}
	return claimWant{cl.Op, cl.At, cl.Before.Min, max, cl.MaySkip, cl.After.Max, cl.Estimate}
}

// checkClaim fails the test unless ch claims w.
func checkClaim(t *testing.T, ch types.Change, w claimWant) {
	t.Helper()
	if got := gotClaim(t, ch); got != w {
		t.Errorf("%s %s claims %v, want %v\nmessage %q", ch.Op, ch.File, got, w, ch.Message)
	}
}

// Claims are numbered from 1 in the order of the output, whichever order
// the pods were visited in, and the numbers go on across a restart that
// reloads the published state; a plain change claims exactly itself.
func TestClaimIDs(t *testing.T) {
	var files []types.File
	for _, n := range []string{"a", "b", "c", "d"} {
		files = append(files, valid(n+".yaml", pod(n, "img:1"), t0))
	}
	st := State{}
	s := snap(true, files...)
	chs, st, _ := Compute(st, s, t0, testOpts)
	for i, ch := range chs {
		if ch.Claim == nil || ch.Claim.ID != uint64(i+1) {
			t.Fatalf("change %d (%s) claim %+v, want ID %d", i, ch.File, ch.Claim, i+1)
		}
		checkClaim(t, ch, claimWant{op: types.OpAdd, at: types.ClaimAtRelist, estimate: true})
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.ClaimSeq != 4 {
		t.Fatalf("the state carries ClaimSeq %d, want 4", back.ClaimSeq)
	}
	up := snap(false, append(files[:3:3], valid("d.yaml", pod("d", "img:2"), t0.Add(time.Second)))...)
	up.Time = t0.Add(time.Second)
	chs, _, _ = Compute(back, up, up.Time, testOpts)
	if len(chs) != 1 || chs[0].Claim == nil || chs[0].Claim.ID != 5 {
		t.Fatalf("after the reload: %+v, want one change claimed as 5", chs)
	}
	checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtWatch})
}

// A claim's JSON carries the names the contract lists, and an unbounded
// Before as a null max.
func TestClaimJSON(t *testing.T) {
	cl := types.Claim{ID: 3, Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Range{}, After: types.After{Max: 1}, With: 2, Amends: []uint64{1}}
	raw, err := json.Marshal(cl)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":3,"op":"UPDATE","at":"watch","before":{"min":0,"max":null},"maySkip":false,"after":{"max":1},"with":2,"amends":[1]}`
	if string(raw) != want {
		t.Fatalf("JSON %s, want %s", raw, want)
	}
}

// opChange is the first change of chs with op, failing the test if none.
func opChange(t *testing.T, chs []types.Change, op types.Op) types.Change {
	t.Helper()
	for _, c := range chs {
		if c.Op == op {
			return c
		}
	}
	t.Fatalf("no %s in %s", op, podOps(chs))
	return types.Change{}
}
