package metrics

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// Each claim is counted once, under its op (amend for an amendment), how
// far it bounds the restarts on the way, and whether it may be skipped;
// a problem, with no claim, counts under none.
func TestClaimsCounted(t *testing.T) {
	m := New("dev", nil)
	tg := serve(t, m)
	if got := value(tg.scrape(), "podwatch_claims_total", "op", "REMOVE", "before", "unbounded", "may_skip", "true"); got != 0 {
		t.Fatalf("before any claim = %v, want 0 (-1: no series)", got)
	}
	m.ObserveChanges([]types.Change{
		{Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonAdded, Claim: &types.Claim{ID: 1, Op: types.OpAdd, Before: types.Bounded(0, 0)}},
		{Op: types.OpUpdate, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Claim: &types.Claim{ID: 2, Op: types.OpUpdate, Before: types.Bounded(0, 2)}},
		{Op: types.OpRemove, Type: v1.EventTypeWarning, Reason: types.ReasonRemoved, Claim: &types.Claim{ID: 3, Op: types.OpRemove, MaySkip: true}},
		{Type: v1.EventTypeWarning, Reason: types.ReasonMayHaveRestarted, Claim: &types.Claim{ID: 4, Amends: []uint64{2}}},
		{Type: v1.EventTypeWarning, Reason: types.ReasonInvalid},
	})
	mfs := tg.scrape()
	for _, c := range []struct {
		op, before, skip string
		want             float64
	}{
		{"ADD", "exact", "false", 1},
		{"UPDATE", "bounded", "false", 1},
		{"REMOVE", "unbounded", "true", 1},
		{"amend", "unbounded", "false", 1},
		{"ADD", "bounded", "false", 0},
		{"UPDATE", "exact", "false", 0},
	} {
		if got := value(mfs, "podwatch_claims_total", "op", c.op, "before", c.before, "may_skip", c.skip); got != c.want {
			t.Errorf("claims{%s,%s,%s} = %v, want %v", c.op, c.before, c.skip, got, c.want)
		}
	}
}

// A claim widened because podwatch followed only some ways is counted
// under each why it carries; a claim with neither counts under none.
func TestWidenedClaimsCounted(t *testing.T) {
	m := New("dev", nil)
	tg := serve(t, m)
	for _, why := range []string{"capped", "folded"} {
		if got := value(tg.scrape(), "podwatch_claims_widened_total", "why", why); got != 0 {
			t.Fatalf("%s before any claim = %v, want 0 (-1: no series)", why, got)
		}
	}
	unbounded := types.Range{Min: 0}
	m.ObserveChanges([]types.Change{
		{Op: types.OpUpdate, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Claim: &types.Claim{ID: 1, Op: types.OpUpdate, Before: unbounded, Capped: true}},
		{Op: types.OpUpdate, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Claim: &types.Claim{ID: 2, Op: types.OpUpdate, Before: unbounded, Folded: true}},
		{Op: types.OpRemove, Type: v1.EventTypeWarning, Reason: types.ReasonRemoved, Claim: &types.Claim{ID: 3, Op: types.OpRemove, Before: unbounded, MaySkip: true, Folded: true}},
		{Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonAdded, Claim: &types.Claim{ID: 4, Op: types.OpAdd, Before: unbounded}},
	})
	mfs := tg.scrape()
	for why, want := range map[string]float64{"capped": 1, "folded": 2} {
		if got := value(mfs, "podwatch_claims_widened_total", "why", why); got != want {
			t.Errorf("widened{why=%s} = %v, want %v", why, got, want)
		}
	}
}
