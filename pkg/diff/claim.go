package diff

import (
	"slices"

	"github.com/podwatch/podwatch/pkg/types"
)

// claimParts is what the change being built says of the kubelet, gathered
// from the same facts as its words, where each hedge is decided: emit
// turns it into the change's types.Claim. Each change starts from none
// (see computation.claimFresh), so that a change held back after its
// hedges were weighed leaves nothing for the next.
type claimParts struct {
	// way counts the restarts the message says may come on the way;
	// behind says none bounds them (the file source runs behind).
	way    int
	behind bool
	// after counts the drop-and-start pairs that may follow.
	after int
	// relist: the kubelet makes the change at a relist; estimate: at one
	// podwatch did not see, so the time is podwatch's own.
	relist, estimate bool
	// skip overrides the change's MaySkip for the claim where the two
	// differ (a follower's caveat wider than the words).
	skip *bool
	// with is the change this one is all-or-nothing with.
	with uint64
	// via names the files the kubelet may have taken in on the way.
	via []string
}

// claimFresh forgets what an earlier change, emitted or held back, said.
func (c *computation) claimFresh() { c.cl = claimParts{} }

// noteVia adds names to the files the claim names on the way.
func (c *computation) noteVia(names ...string) {
	for _, n := range names {
		if n != "" && !slices.Contains(c.cl.via, n) {
			c.cl.via = append(c.cl.via, n)
		}
	}
}

// nextClaimID numbers a claim: the State carries the count, so that the
// numbers go on across a restart of the agent.
func (c *computation) nextClaimID() uint64 {
	c.next.ClaimSeq++
	return c.next.ClaimSeq
}

// claimOf is the claim of ch, a change of a pod, from what its words said
// (c.cl), which it consumes.
func (c *computation) claimOf(op types.Op, maySkip bool) *types.Claim {
	p := c.cl
	c.cl = claimParts{}
	cl := &types.Claim{ID: c.nextClaimID(), Op: op, At: types.ClaimAtWatch, Before: types.Bounded(0, p.way), MaySkip: maySkip,
		After: types.After{Max: p.after}, With: p.with, Via: p.via}
	if p.skip != nil {
		cl.MaySkip = *p.skip
	}
	if p.behind {
		cl.Before.Max = nil
	}
	if p.relist || c.relisted || c.watchGone() {
		cl.At = types.ClaimAtRelist
		cl.Estimate = p.estimate || c.estimated
	}
	return cl
}

// renumber gives the claims of c.changes[first:], just sorted by pod, the
// IDs they took when emitted in map order, in their new order: IDs then
// follow the output, whichever path made it. What refers to a claim by ID
// (With, the view's notes of a REMOVE said, the runs amend counts) follows.
func (c *computation) renumber(first int) {
	var ids []uint64
	for _, ch := range c.changes[first:] {
		if ch.Claim != nil {
			ids = append(ids, ch.Claim.ID)
		}
	}
	if slices.IsSorted(ids) {
		return
	}
	sorted := slices.Sorted(slices.Values(ids))
	to := make(map[uint64]uint64, len(ids))
	for i, id := range ids {
		to[id] = sorted[i]
	}
	re := func(id *uint64) {
		if n, ok := to[*id]; ok {
			*id = n
		}
	}
	for _, ch := range c.changes[first:] {
		if ch.Claim != nil {
			re(&ch.Claim.ID)
			re(&ch.Claim.With)
		}
	}
	kv := c.kv
	if kv == nil {
		return // the port engine keeps no catalogue to renumber
	}
	for k, v := range kv.fixed {
		re(&v.removeID)
		kv.fixed[k] = v
	}
	for k, v := range kv.raced {
		re(&v.removeID)
		kv.raced[k] = v
	}
	for k, v := range kv.bounced {
		re(&v.removeID)
		kv.bounced[k] = v
	}
	for k, v := range kv.said {
		v.ids = slices.Clone(v.ids)
		for i := range v.ids {
			re(&v.ids[i])
		}
		kv.said[k] = v
	}
}
