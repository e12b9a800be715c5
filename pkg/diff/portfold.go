package diff

import (
	"slices"

	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/types"
)

// A window folded by force (a busy folder: more inputs than
// portWindowMax) keeps podwatch's own view and drops the other ways it
// held. A key those ways held differently at the fold is marked: the
// kubelet may be on a dropped way, which no later window explores, so
// the next claim said of the key is widened (claimFolded). Keys whose
// ways agreed are not marked and stay as tight as before.

// foldForced folds the window as e, its exploration, whatever its ways
// say, and marks the keys they held differently.
func (ps *portState) foldForced(e *model.Explored) {
	ps.foldForcedTo(e, len(ps.tl.Inputs()))
}

// foldForcedTo is foldForced of the window's first n inputs, e their
// exploration; the rest stay in the window (portHeld).
func (ps *portState) foldForcedTo(e *model.Explored, n int) {
	marks := e.Differing()
	ps.foldTo(e, n)
	if len(marks) == 0 {
		return
	}
	if ps.folded == nil {
		ps.folded = make(map[string][]string, len(marks))
	}
	for key, runs := range marks {
		was, marked := ps.folded[key]
		switch {
		case !marked:
			ps.folded[key] = runs
		case was == nil || runs == nil:
			ps.folded[key] = nil // some dropped way is unknown
		default:
			was = slices.Clone(was) // a cloned state shares the slice
			for _, r := range runs {
				if !slices.Contains(was, r) {
					was = append(was, r)
				}
			}
			ps.folded[key] = was
		}
	}
}

// refold is the marks as the window about to be folded as e leaves
// them. A relist that replaces the file source's store on every way
// unmarks every key: the kubelet's replaceStore then holds what the
// folder lists, and its merge runs that, whatever way it was on before;
// the window's exploration, from podwatch's own view, covers what
// follows. An empty relist keeps the store, and leaves the marks. A
// marked key the window touched without a claim said of it may have
// moved on a dropped way as well: what those ways run is unknown now.
func (ps *portState) refold(e *model.Explored, inputs []model.Input) {
	if len(ps.folded) == 0 {
		return
	}
	if model.ReplacesStore(inputs) {
		ps.folded = nil
		return
	}
	for key := range ps.folded {
		if e.Part(key) != nil {
			ps.folded[key] = nil
		}
	}
}

// claimFolded widens cl, the claim of key's change to to, when key is
// marked by a forced fold, and unmarks it: no count of the window's
// events bounds the restarts on a dropped way (Before is unbounded), and
// the kubelet may make none of the change where a dropped way does not
// run it: one the window's inputs did not touch since (touched false)
// is where the fold left it, so it makes the change only if it already
// ran to; one they touched made the change with them, unless it ran to
// already. It says whether it widened cl.
func (ps *portState) claimFolded(key, to string, touched bool, cl *types.Claim) bool {
	runs, marked := ps.folded[key]
	if !marked {
		return false
	}
	ps.unmark(key)
	cl.Folded = true
	cl.Before = types.Range{Min: 0}
	if runs == nil {
		cl.MaySkip = true // a capped part's ways: unknown
		return true
	}
	for _, r := range runs {
		if (r == to) == touched {
			cl.MaySkip = true
		}
	}
	return true
}

// unmark forgets key's mark.
func (ps *portState) unmark(key string) {
	delete(ps.folded, key)
	if len(ps.folded) == 0 {
		ps.folded = nil
	}
}
