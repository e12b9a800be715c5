package diff

import (
	"slices"

	"github.com/podwatch/podwatch/pkg/types"
)

// A relist is taken in a moment after it was seen (the agent's relistLag),
// so the watch may have taken in a name's going before it, though the name
// went after the relist's folder open. The kubelet takes a relist and a
// watch event in one at a time: the going's event, queued while the relist
// ran, comes after it, and drops the pod the name last gave (the relist
// recorded the name's key again if it read it; a relist never clears one),
// whatever file the relist gave that pod. A shadowed manifest deleted just
// after a relist opened the folder leaves the pod stopped until the next
// relist, not started again by the one that read it.
//
// The relist detector's list of what the folder held at the open
// (Snapshot.KubeletRelistListed) orders the going against it without
// clocks: a name listed there and gone now went after the open. Without it
// (a relist podwatch stands in for, or a phase just learnt) the relist is
// taken to come after every going the watch took in before it.

// goneAfter lists the keys of the pods that names the watch took out of
// the store went after snap's relist opened the folder, and that no later
// event gave back: the kubelet's store lacks them after the relist as the
// view's does.
func (v *kubeletView) goneAfter(snap types.Snapshot) []string {
	if len(v.went) == 0 || len(snap.KubeletRelistListed) == 0 {
		return nil
	}
	var out []string
	for name, key := range v.went {
		if _, held := v.store[key]; held || lookup(snap.Files, name) != nil {
			continue
		}
		if _, listed := slices.BinarySearch(snap.KubeletRelistListed, name); listed {
			out = append(out, key)
		}
	}
	return out
}

// bornUnlisted names the files the watch created since the last relist
// that the folder did not hold at snap's relist's open: that relist never
// read them, though it may be dated after podwatch read them (the
// detector dates it by the batch it read the open in, which may come
// late), and after a first content podwatch read part-written (os.WriteFile
// creates the file empty). nil without the detector's list.
func (v *kubeletView) bornUnlisted(snap types.Snapshot) map[string]bool {
	listed := snap.KubeletRelistListed
	if len(v.born) == 0 || len(listed) == 0 {
		return nil
	}
	var out map[string]bool
	for name := range v.born {
		if _, read := slices.BinarySearch(listed, name); read {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	return out
}
