package diff

import (
	"slices"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The incremental step is for a snapshot that names what it changed
// (types.Snapshot.Changed): it looks at the named files' problems alone,
// the port deciding the pods from its window, so that one change costs
// the same in a folder of ten files or ten thousand.
//
// It needs the previous step to have left a plain State (a baseline): every
// valid file of that snapshot defines a pod no other file defines, and that
// pod is published from it with its Hash and Config; nothing waits to settle
// (so every problem of a file not named again has been reported, and stays
// quiet until the next relist); no pod waits at all. Then what the full
// path would do for an unnamed file is nothing, and only the named files
// can move. Anything that might make a published pod lose its file (a
// REMOVE, a kept pod, a changed winner) or define a key twice falls back to
// the full path, as do a relist, a missing or unreadable path, and single-
// file mode. TestIncrementalMatchesFull holds it to the full path.

// baseline is what a plain State was computed from.
type baseline struct {
	seq   uint64
	files []*types.File // that snapshot's Files, shared and read-only
	now   time.Time
	opts  Options
}

// podsPlain reports whether the published pods are exactly the pods of the
// valid files, each from its own file, as the kubelet has them.
func (c *computation) podsPlain() bool {
	n := 0
	for _, f := range c.snap.Files {
		if !validPod(f) {
			continue
		}
		p := c.next.Pods[f.Pod.Key]
		if p == nil || p.File != f.Name || p.Hash != f.Pod.Hash || p.Config != f.Pod.Config {
			return false
		}
		n++
	}
	return n == len(c.next.Pods)
}

// touchedProblems reports the problems of names, the files the
// incremental step looks at.
func (c *computation) touchedProblems(names []string) {
	for _, name := range names {
		if f := lookup(c.snap.Files, name); f != nil {
			c.fileProblem(f)
		}
	}
}

// incrementalPlan checks that the snapshot may be diffed from b by the
// names it changed alone, with no side effect, and returns those names,
// sorted.
func (c *computation) incrementalPlan(b *baseline) ([]string, bool) {
	s := c.snap
	if b == nil || c.opts.fullOnly || s.Changed == nil || s.Relist || s.PathErr != nil || s.Single ||
		s.Seq != b.seq+1 || c.now.Before(b.now) || c.opts.comparable() != b.opts {
		return nil, false
	}
	names := s.Changed
	if !slices.IsSorted(names) {
		names = slices.Sorted(slices.Values(names))
	}
	names = slices.Compact(slices.Clone(names))
	var fresh map[string]bool // keys new files define
	for _, name := range names {
		was, cur := lookup(b.files, name), lookup(s.Files, name)
		var wasKey, curKey string
		if was != nil && validPod(was) {
			wasKey = was.Pod.Key
		}
		if cur != nil && validPod(cur) {
			curKey = cur.Pod.Key
		}
		switch {
		case wasKey != "" && wasKey != curKey:
			return nil, false // a published pod loses its file
		case curKey == "":
		case wasKey == curKey:
			if p := c.next.Pods[curKey]; p == nil || p.File != name {
				return nil, false // not the baseline it claims to be
			}
		default:
			if _, ok := c.next.Pods[curKey]; ok {
				return nil, false // a second file for a published pod, or a new winner
			}
			if fresh[curKey] {
				return nil, false // two new files define one pod
			}
			if fresh == nil {
				fresh = map[string]bool{}
			}
			fresh[curKey] = true
		}
	}
	return names, true
}

// touchedIDs are the problem IDs the incremental step may have made stale:
// those of the named files, and the watch's.
func touchedIDs(names []string) []string {
	ids := make([]string, 0, 1+3*len(names))
	ids = append(ids, "watch")
	for _, name := range names {
		ids = append(ids, "unreadable/"+name, "invalid/"+name, "ignored/"+name)
	}
	return ids
}

// sweep is sweepAll for the problems ids alone: the incremental step leaves
// every other entry as the full path would.
func (c *computation) sweep(ids []string) {
	for _, id := range ids {
		if !c.liveProblem[id] {
			delete(c.next.Reported, id)
		}
		if pid := "problem/" + id; !c.livePending[pid] {
			delete(c.next.Pending, pid)
		}
	}
}

// lookup finds a file by name in files, sorted by name.
func lookup(files []*types.File, name string) *types.File {
	i, ok := slices.BinarySearchFunc(files, name, func(f *types.File, n string) int { return strings.Compare(f.Name, n) })
	if !ok {
		return nil
	}
	return files[i]
}
