package relist

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The kubelet's relists on a loaded machine (testdata/loaded): its ticker
// fires late by tens of milliseconds, and the detector reads each open
// later still, but never early. Told the kubelet's period, as the agent
// tells it, the detector recognises every relist, and once the phase is
// known each is on it and the phase stays known.
func TestReplayLoadedKubelet(t *testing.T) {
	const near = 150 * time.Millisecond
	eachTrace(t, filepath.Join("loaded", "*.trace"), []time.Duration{2 * time.Second}, func(t *testing.T, tr trace, obs []types.RelistObservation) {
		got := relists(obs)
		for _, k := range tr.kubelet {
			if !slices.ContainsFunc(got, func(rl types.KubeletRelist) bool { return rl.At.Sub(k) >= 0 && rl.At.Sub(k) <= near }) {
				t.Errorf("the kubelet's relist at %v was not recognised", k.Sub(base))
			}
		}
		known := false
		for _, o := range obs {
			switch {
			case o.Relist != nil && known && !o.Relist.OnPhase:
				t.Errorf("the kubelet's relist at %v is off the phase (next was %v)", o.Relist.At.Sub(base), o.Phase.Next.Sub(base))
			case known && o.Phase.State != types.RelistKnown:
				t.Errorf("phase %v after it was known: %s", o.Phase.State, o.Phase.Why)
			}
			if o.Phase.State == types.RelistKnown {
				known = true
			}
		}
		if !known {
			t.Fatal("the phase was never known")
		}
	})
}
