package diff

import "github.com/podwatch/podwatch/pkg/types"

// A file written in pieces through one open file (a slow writer, or one
// that writes in chunks) gets a watch event per write, and the kubelet
// reads the file on each: a read before the last write sees a part of it,
// which may be a valid pod of its own, and restarts the pod to it. Which
// parts the kubelet read is a race podwatch cannot see, as is whether a
// part podwatch read is one the kubelet read at all. What it does know is
// the events: the view counts those it took in while the file was open
// (not yet seen closed or moved in) and read a valid pod from it, and
// when the file is whole, the reads of a part no message named are
// restarts the kubelet may have made on the way (see computation.onTheWay).
// A source busy elsewhere takes several writes' events in as one, read
// once: the versions that event says it folded count as such events too,
// which podwatch never read.

// partialRead is a file completed at the last step and how many reads of
// a part of it the kubelet may have restarted the pod to.
type partialRead struct {
	name string
	n    int
}

// openEvent takes in a watch event on name, which podwatch read as f. It
// counts an event on a file still open; on a file whole again it notes
// the earlier ones, but for those a message already named (halves), as
// reads of a part. event says a watch event came with this read: without
// one (the file only closed since), the last event counted was the final
// write, whose read got the whole.
func (v *kubeletView) openEvent(name string, f *types.File, event bool) {
	if event {
		delete(v.unwatched, name)
	}
	switch {
	case f == nil:
		delete(v.midway, name)
		delete(v.halves, name)
	case !f.Complete:
		if event && validPod(f) {
			if v.midway == nil {
				v.midway = map[string]int{}
			}
			v.midway[name]++
		}
	default:
		n := v.midway[name]
		if !event {
			n--
		}
		n -= v.halves[name]
		delete(v.midway, name)
		delete(v.halves, name)
		if n > 0 && validPod(f) {
			if v.partial == nil {
				v.partial = map[string]partialRead{}
			}
			v.partial[f.Pod.Key] = partialRead{name, n}
		}
	}
}

// foldedEvent counts the versions an event the source folded from
// several holds before the last (types.WatchEvent.Folded) as events on
// the file still open: the kubelet took each in and read the file there,
// where podwatch read only the last. Whether one was valid is unknown, so
// each counts.
func (v *kubeletView) foldedEvent(ev types.WatchEvent) {
	if ev.Folded <= 0 || ev.Gone {
		return
	}
	if v.midway == nil {
		v.midway = map[string]int{}
	}
	v.midway[ev.Name] += ev.Folded
}

// midWrite says whether an UPDATE from f is one from a file still open
// for writing, and notes it: the kubelet, reading it late, may take in
// only the whole and make no restart for this part. A relist of podwatch's
// that read the file mid-write counts too: the kubelet had its events. A
// file as the first list after a start found it does not: it was written
// before podwatch watched, and nothing says it is still open.
func (v *kubeletView) midWrite(f *types.File) bool {
	if f.Complete || v.unwatched[f.Name] {
		return false
	}
	if v.halves == nil {
		v.halves = map[string]int{}
	}
	v.halves[f.Name]++
	return true
}
