package diff

import (
	"github.com/podwatch/podwatch/pkg/types"
)

// The plain case is the common one: every published pod is still defined
// by the file it came from and by no other, and no key is defined twice.
// Then each valid file is its pod's winner, and a step needs one lookup per
// file instead of building a map of every pod the kubelet wants, a map that
// in a large folder would dominate what one change costs (see
// BenchmarkComputeOneChange). Anything else (a REMOVE, a duplicate, a
// changed winner, a kept pod) takes the full path, which gives the same
// result; TestPlainPathMatchesFull holds them together.

// planned is one valid file and what is published under its key.
type planned struct {
	f   *types.File
	p   *PodState
	had bool
}

// plainPlan checks that the snapshot is plain, with no side effect, and
// returns the valid files that may change something: new pods, and
// published ones whose content changed. The others are no-ops of update.
func (c *computation) plainPlan() ([]planned, bool) {
	if c.opts.fullOnly || c.snap.Single || !c.kv.plain || c.saysFixed() {
		return nil, false
	}
	var plan []planned
	own := 0
	var fresh map[string]bool // keys not published yet
	for i := range c.snap.Files {
		f := c.snap.Files[i]
		if !validPod(f) {
			continue
		}
		p, had := c.next.Pods[f.Pod.Key]
		switch {
		case had && p.File == f.Name:
			own++
			if p.Hash == f.Pod.Hash && p.Config == f.Pod.Config {
				continue // same file, same content: update would do nothing
			}
		case had:
			return nil, false // a second file for a published pod, or a new winner
		default:
			if fresh[f.Pod.Key] {
				return nil, false // two new files define one pod
			}
			if fresh == nil {
				fresh = map[string]bool{}
			}
			fresh[f.Pod.Key] = true
		}
		plan = append(plan, planned{f: f, p: p, had: had})
	}
	if own != len(c.next.Pods) {
		return nil, false // a published pod lost its file: a REMOVE or a kept pod
	}
	return plan, true
}

// plainChanges is podChanges for a plain snapshot.
func (c *computation) plainChanges(plan []planned) {
	if c.portPods {
		return
	}
	first := len(c.changes)
	for _, w := range plan {
		if w.had {
			c.update(w.f.Pod.Key, *w.p, w.f)
		} else {
			c.add(w.f.Pod.Key, w.f)
		}
	}
	sortByPod(c.changes[first:])
	c.renumber(first)
}
