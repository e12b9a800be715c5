package diff

import "slices"

// The kubelet's file source takes either a due relist or a queued watch
// event, and a loaded kubelet takes its events seconds late: a relist may
// read the folder after a change whose events still wait. They then replay
// over what the relist read, each reading its file as it is now, so the
// same again, except a name's going, which drops the pod the name last gave
// (its fileKeyMapping, which a relist never clears), whatever file that pod
// comes from by then. Where the events drop a pod and the next event for it
// gives it again (a manifest renamed: the old name's going, then the new
// name; or deleted and written again), such a relist starts the pod from
// its last file, the going stops it and the next event starts it again:
// the sync loop is told a REMOVE and an ADD more, and the pod restarts once
// more if it had started. Whether the relist came between is a race
// podwatch cannot see (its open of the folder is in podwatch's watch, the
// kubelet's taking the events in is not, and its lag has no bound), so
// the pod's next UPDATE says the kubelet may stop and start it again once.
// replayDrop holds, per key, the name whose going did it. A drop with
// another file between it and the last (emacs's backup) is counted on the
// way instead (droppedOnWay), and vim's backup says its own (mayDrop).

// noteReplayDrop notes, for key's trail t of this step's events (by: the
// name of each event that changed it), a drop the last event gave the pod
// back from: in this step, or the last step's (lastDrop) when t starts
// with none.
func (v *kubeletView) noteReplayDrop(key string, t, by []string) {
	n := len(t)
	if n < 2 || t[n-1] == "" || t[n-2] != "" {
		return
	}
	name := ""
	switch {
	case n >= 3:
		name = by[n-3]
	case v.lastDrop[key] != "":
		name = v.lastDrop[key]
	default:
		return
	}
	if v.replayDrop == nil {
		v.replayDrop = map[string]string{}
	}
	v.replayDrop[key] = name
}

// replayDropOf is the name whose going may stop key's pod after a relist
// of the kubelet's, "" for none or when the message says a drop already.
func (v *kubeletView) replayDropOf(key string) string {
	if v.mayDrop[key] != "" || slices.Contains(v.droppedOnWay[key], v.replayDrop[key]) {
		return ""
	}
	return v.replayDrop[key]
}
