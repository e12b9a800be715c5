package relist

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The real kubelet's relists as its log timed them in a go where its file
// source was held up by a busy sync loop (testdata/held-up): its ticker
// keeps the grid, and a relist it is late for comes once, late, after the
// grid point it missed. Replayed, with the tracker checked at its
// deadlines:
//   - a late relist is never on the phase: it may be another tool's full
//     read, and the kubelet's own may still be to come;
//   - every relist back on the grid is on the phase, but for the first
//     after a loss (two bring the lost phase back);
//   - the phase is lost only where the kubelet read nothing for three
//     periods, and is otherwise never unknown but for relists that keep
//     coming late; never for "something besides the kubelet".
func TestReplayKubeletHeldUp(t *testing.T) {
	const period = 2 * time.Second
	tol := DefaultTolerance
	eachTrace(t, filepath.Join("held-up", "*.trace"), bothWays, func(t *testing.T, tr trace, obs []types.RelistObservation) {
		got := relists(obs)
		if len(got) != len(tr.kubelet) {
			t.Fatalf("%d relists recognised, want the kubelet's %d", len(got), len(tr.kubelet))
		}
		// Each trace begins on a grid point of the kubelet's ticker.
		grid := base
		// Within the tolerance of a grid point, a relist is on the grid;
		// later than three, late. In between it may be either: seen late
		// by podwatch or made late by the kubelet.
		off := func(at time.Time) time.Duration {
			o := at.Sub(grid) % period
			if o > period/2 {
				o -= period
			}
			return o
		}
		onGrid := func(at time.Time) bool { return abs(off(at)) <= tol }
		late := func(at time.Time) bool { return off(at) > lateTolerance(tol) }
		// silentAfter is how long the kubelet read nothing after at.
		silentAfter := func(at time.Time) time.Duration {
			i, found := slices.BinarySearchFunc(tr.kubelet, at, func(k, at time.Time) int { return k.Compare(at) })
			if found {
				i++
			}
			if i == len(tr.kubelet) {
				return time.Hour
			}
			return tr.kubelet[i].Sub(at)
		}
		var lastSeen time.Time
		known, afterLoss := false, false
		losses := 0
		for _, o := range obs {
			p := o.Phase
			if o.Relist == nil {
				switch {
				case p.State == types.RelistKnown:
					known = true
				case p.State == types.RelistLost:
					losses++
					afterLoss = true
					if g := silentAfter(lastSeen); g < stopCycles*period {
						t.Errorf("lost (%s), but the kubelet read the folder %v after its last relist seen", p.Why, g)
					}
				case known && !strings.Contains(p.Why, "come late") && !strings.Contains(p.Why, "lost"):
					t.Errorf("unknown after it was known: %s", p.Why)
				}
				continue
			}
			rl := o.Relist
			lastSeen = rl.At
			switch {
			case late(rl.At) && rl.OnPhase:
				t.Errorf("the relist at %v, late off the grid, is on the phase", rl.At.Sub(base))
			case onGrid(rl.At) && known && !rl.OnPhase && !afterLoss:
				t.Errorf("the relist at %v, on the grid, is not on the phase (%v: %s)", rl.At.Sub(base), p.State, p.Why)
			case onGrid(rl.At) && afterLoss:
				afterLoss = false
			}
			if p.State == types.RelistKnown {
				known = true
			}
		}
		if !known {
			t.Fatal("the phase was never known")
		}
		// The trace holds seven silences of three periods or more.
		if losses > 7 {
			t.Errorf("lost %d times", losses)
		}
		t.Logf("lost %d times", losses)
	})
}
