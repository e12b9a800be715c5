package diff

import (
	"slices"
	"time"

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
// (Snapshot.KubeletRelistRead.Listed) orders the going against it without
// clocks: a name listed there and gone now went after the open. So did a
// name that came after the open (an editor's backup, renamed in and
// deleted in one save): the detector names those it read up to the
// relist's completion (Snapshot.KubeletRelistRead.Came), and one the watch
// created later still was first read by podwatch after the relist's
// open, by the clocks. The kubelet, taking the backup's events in after
// the relist, drops the pod it last gave (if it read the backup then, or
// on an earlier save: a relist never clears a name's key), until the
// next relist. Without the list (a relist podwatch stands in for, or a
// phase just learnt) the relist is taken to come after every going the
// watch took in before it.

// wentName is a name whose going the watch took in (kubeletView.went).
type wentName struct {
	key string
	// born is when podwatch first read the name, if the watch created it
	// since the last relist; zero when it did not.
	born time.Time
}

// goneAfter lists the keys of the pods that names the watch took out of
// the store went after snap's relist opened the folder, and that no later
// event gave back: the kubelet's store lacks them after the relist as the
// view's does.
func (v *kubeletView) goneAfter(snap types.Snapshot) []string {
	if len(v.went) == 0 || len(snap.KubeletRelistRead.Listed) == 0 {
		return nil
	}
	var out []string
	for name, w := range v.went {
		if _, held := v.store[w.key]; held || lookup(snap.Files, name) != nil {
			continue
		}
		if cameAfterOpen(snap, name, w.born) {
			out = append(out, w.key)
		}
	}
	return out
}

// cameAfterOpen says the folder held name at some time after snap's
// relist opened it: listed then, or come since, by the detector's queue
// or, for one the watch created (first read at born), by the clocks.
func cameAfterOpen(snap types.Snapshot, name string, born time.Time) bool {
	if _, listed := slices.BinarySearch(snap.KubeletRelistRead.Listed, name); listed {
		return true
	}
	if _, came := slices.BinarySearch(snap.KubeletRelistRead.Came, name); came {
		return true
	}
	return !born.IsZero() && born.After(snap.KubeletRelist)
}

// bornUnlisted names the files the watch created since the last relist
// that the folder did not hold at snap's relist's open: that relist never
// read them, though it may be dated after podwatch read them (the
// detector dates it by the batch it read the open in, which may come
// late), and after a first content podwatch read part-written (os.WriteFile
// creates the file empty). nil without the detector's list.
func (v *kubeletView) bornUnlisted(snap types.Snapshot) map[string]bool {
	listed := snap.KubeletRelistRead.Listed
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
