package metrics

import (
	"github.com/podwatch/podwatch/pkg/types"
)

// Label values of podwatch_claims_total's before: how far a claim bounds
// the restarts on the way to its change.
const (
	beforeExact     = "exact"
	beforeBounded   = "bounded"
	beforeUnbounded = "unbounded"
)

// claimOpAmend is the op label of an amendment's claim, which has no op.
const claimOpAmend = "amend"

func newClaimsCounter() *vec[counter] {
	c := newCounterVec("podwatch_claims_total",
		"Claims said with changes (what a change allows of the kubelet, the podwatch.io/claim annotation), by op (ADD, UPDATE, REMOVE, amend), by how far before bounds the restarts on the way (exact, bounded, unbounded) and by may_skip.",
		"op", "before", "may_skip")
	for _, op := range []string{string(types.OpAdd), string(types.OpUpdate), string(types.OpRemove), claimOpAmend} {
		for _, b := range []string{beforeExact, beforeBounded, beforeUnbounded} {
			for _, s := range []string{"false", "true"} {
				c.WithLabelValues(op, b, s)
			}
		}
	}
	return c
}

// claimLabels are the labels c is counted under.
func claimLabels(c *types.Claim) (op, before, maySkip string) {
	op = string(c.Op)
	if op == "" {
		op = claimOpAmend
	}
	switch {
	case c.Before.Max == nil:
		before = beforeUnbounded
	case *c.Before.Max == c.Before.Min:
		before = beforeExact
	default:
		before = beforeBounded
	}
	maySkip = "false"
	if c.MaySkip {
		maySkip = "true"
	}
	return op, before, maySkip
}

// Label values of podwatch_claims_widened_total's why.
const (
	widenedCapped = "capped"
	widenedFolded = "folded"
)

func newWidenedCounter() *vec[counter] {
	c := newCounterVec("podwatch_claims_widened_total",
		"Claims widened to allow any number of restarts on the way because podwatch followed only some of the ways the kubelet may have gone, by why: capped (more ways than it explores) or folded (a busy folder made it keep only its own view).",
		"why")
	for _, why := range []string{widenedCapped, widenedFolded} {
		c.WithLabelValues(why)
	}
	return c
}

// widenedWhy are the why labels c counts under: none, one or both.
func widenedWhy(c *types.Claim) []string {
	var out []string
	if c.Capped {
		out = append(out, widenedCapped)
	}
	if c.Folded {
		out = append(out, widenedFolded)
	}
	return out
}
