package diff

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/types"
)

// A relist of the kubelet's seen late goes where it fell among the
// window's events (model.Timeline.Again, relistat.go); here is what the
// port engine does around it: the window is not folded while a relist
// still to be taken in may have come before one of its events, and a pod
// that relist dropped, which a later event of the window started again,
// is the REMOVE and the ADD the kubelet made, though podwatch's view at
// the window's end runs what was published.

// placedRelist is the index in after of the relist input a step placed,
// which before did not hold; -1 for none.
func placedRelist(before map[*model.Listing]bool, after []model.Input) int {
	for i, in := range after {
		if in.Relist != nil && !before[in.Relist] {
			return i
		}
	}
	return -1
}

// relistsOf are the relists of inputs, by their listing.
func relistsOf(inputs []model.Input) map[*model.Listing]bool {
	out := map[*model.Listing]bool{}
	for _, in := range inputs {
		if in.Relist != nil {
			out[in.Relist] = true
		}
	}
	return out
}

// portHolds says the window is not to be folded yet: it holds an event
// podwatch read after a relist of the kubelet's not yet taken in may have
// opened the folder, which may have come before it (heldFrom). While no
// phase is known no relist of the kubelet's is handed, and nothing holds.
func (c *computation) portHolds(ps *portState) bool {
	last := ps.tl.Relisted()
	if c.opts.RelistPeriod <= 0 || last.IsZero() || c.snap.KubeletRelist.IsZero() {
		return false
	}
	return ps.tl.ReadAfter(c.heldFrom(last))
}

// heldFrom is the earliest a relist of the kubelet's not yet taken in may
// have opened the folder, last the one taken in last. It came after last,
// and is handed at most relistSeenLate after its open. On a known phase
// (Snapshot.KubeletRelistNext) its ticker opens the folder no sooner than
// the next relist due, and an event the kubelet's watch still queued then
// was read at most relistQueued before; unless a sign says its file
// source runs behind, when events wait in its queue for longer.
func (c *computation) heldFrom(last time.Time) time.Time {
	from := types.Later(last, c.now.Add(-relistSeenLate))
	if _, near := c.nearSign(); !c.snap.KubeletRelistNext.IsZero() && !near {
		from = types.Later(from, c.snap.KubeletRelistNext.Add(-relistQueued))
	}
	return from
}

// portHeld is, for a window folded by force, how many of its inputs may
// be folded: those before the first snapshot with an event that a relist
// of the kubelet's not yet taken in may have come before (portHolds).
// The kubelet takes that relist in where it fell among the events it
// queued, and reads the files as they were there, so a fold of those
// events would have it read them as the fold left them.
func (c *computation) portHeld(ps *portState) int {
	if !c.portHolds(ps) {
		return len(ps.tl.Inputs())
	}
	return ps.tl.ReadFrom(c.heldFrom(ps.tl.Relisted()))
}

// relistSeenLate bounds how long after its folder open a relist of the
// kubelet's is handed to the diff: the detector recognises it once it
// has read the last file, and the agent takes it in 750 ms after that.
const relistSeenLate = 2 * time.Second

// relistQueued bounds how long before a relist of the kubelet's opens
// the folder podwatch may read an event the kubelet's watch has not taken
// in by then, while its file source keeps up: a relist that comes before
// such an event reads what the event brings (model.Timeline.place).
const relistQueued = 500 * time.Millisecond

// bounce says, for key's pod back the same at the window's end, the
// REMOVE and the ADD of the relist placed this step, which dropped it,
// and the event after it that started it again; false when that relist
// did not drop it.
func (w *portWindow) bounce(key string, pub PodState, said string) bool {
	i := w.placed
	if i < 0 || w.e.Part(key) == nil {
		// No relist this step, or one that moved the key on no way: a
		// relist explores every key but the still ones (model.Explore).
		return false
	}
	before := w.before(i)
	prev, run := before.Running(key), w.states[i].Running(key)
	switch {
	case run == prev || prev == "":
		return false
	case run == said:
		// The relist made the change podwatch said already, on the watch
		// event it now comes before: that event changes nothing more.
		return false
	case run != "" && prev != said:
		if _, waits := w.c.next.Pending["pod/"+key]; waits {
			// The pod the relist took back was never said: the
			// excursion's two UPDATEs are.
			return false
		}
		return w.wentBack(key, i)
	case run != "":
		return w.excursion(key, pub, said)
	}
	c := w.c
	l := w.inputs[i].Relist
	by := ""
	if emptyListing(l) {
		// The relist found no valid file: it stopped every pod and kept
		// its store, which the event that ran the pod again sent.
		for j := i + 1; j < len(w.inputs); j++ {
			if w.states[j].Running(key) != "" {
				if e := w.inputs[j].Event; e != nil {
					by = pathBase(e.Path)
				}
				break
			}
		}
	}
	may := false
	if part := w.e.Part(key); part != nil {
		may = part.Capped || slices.ContainsFunc(part.Ends, func(end model.End) bool {
			r := end.Runs[key]
			if j := slices.Index(r, said); j >= 0 {
				r = r[j:]
			}
			return !slices.Contains(r, "")
		})
	}
	path := model.PathOf(c.snap, pub.File)
	b := bounce{file: pub.File, read: listedRead(l, path, pub.File), at: w.ps.tl.Relisted(), may: may, revivedBy: by,
		during: slices.ContainsFunc(c.snap.KubeletRelistRead.Written, func(x types.RelistWrite) bool { return x.Name == pub.File && x.Before })}
	_, pod, _ := w.own(key)
	f := w.ps.fileFor(c.snap, pod)
	if f == nil && by == "" {
		return false
	}
	c.ownPods()
	delete(c.next.Pods, key)
	rm := &types.Claim{ID: c.nextClaimID(), Op: types.OpRemove, At: types.ClaimAtRelist, Before: types.Bounded(0, 0), MaySkip: may, Estimate: w.unseen}
	c.portEmit(types.Change{
		Op: types.OpRemove, Type: v1.EventTypeWarning, Reason: types.ReasonRemoved, Object: podObject(key), File: b.file, At: b.at, MaySkip: may,
		ID: changeID(key, types.OpRemove, nil), Key: transition(types.ReasonRemoved, b.file, pub.identity(), ""),
		Message: b.glance(), Detail: b.message(key),
	}, rm)
	add := &types.Claim{ID: c.nextClaimID(), Op: types.OpAdd, At: types.ClaimAtRelist, Before: types.Bounded(0, 0), MaySkip: may, With: rm.ID}
	if by != "" {
		// From the store's last good parse, kept by the relist that found
		// no valid file: the pod's UID is the one the kubelet is
		// stopping, which its pod workers start again once the stop is
		// done, and a relist in between drops it first.
		p := pub
		c.next.Pods[key] = &p
		c.portEmit(types.Change{
			Op: types.OpAdd, Type: v1.EventTypeWarning, Reason: types.ReasonAdded, Object: podObject(key), File: p.File, Hash: p.Hash, MaySkip: true,
			ID:      changeID(key, types.OpAdd, &types.File{Name: p.File, Pod: &types.Pod{Hash: p.Hash, Config: p.Config, UID: p.UID}}),
			Key:     transition(types.ReasonAdded, p.File, "", p.identity()),
			Message: fmt.Sprintf("%s, its last good parse: the kubelet starts the pod again once it has stopped it; its next relist may drop it first", p.File),
			Detail: fmt.Sprintf("static pod %s added again from its last good parse of %s: %s; the kubelet starts it once it has stopped it (at its next housekeeping), unless its next relist drops it first",
				key, p.File, b.started()),
		}, add)
		return true
	}
	c.next.Pods[key] = published(f)
	c.portEmit(addChange(key, f, v1.EventTypeNormal, c.startMessage(f, b.started(), may),
		fmt.Sprintf("%s: static pod %s added (%s); %s", f.Name, key, images(f), b.started()), may), add)
	return true
}

// wentBack says the restart the relist at input i made, from the pod
// podwatch said before to the one it ran from another file (the winner a
// watch event had displaced), between two watch events podwatch said as
// one restart: an UPDATE the kubelet made that leaves the published pod
// as it is, the watch having moved on from it.
func (w *portWindow) wentBack(key string, i int) bool {
	c := w.c
	p, ok := w.states[i].Pod(key)
	pub := c.next.Pods[key]
	if !ok || pub == nil {
		return false
	}
	file, then, at := pathBase(p.File), pub.File, w.ps.tl.Relisted()
	cl := &types.Claim{ID: c.nextClaimID(), Op: types.OpUpdate, At: types.ClaimAtRelist, Before: types.Bounded(0, 0), Estimate: w.unseen}
	c.portEmit(types.Change{
		Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Object: podObject(key), File: file, At: at,
		Key:     transition(types.ReasonUpdated, file, "watch:"+then, pub.identity()),
		Message: fmt.Sprintf("%s: the kubelet's relist ran the pod from it again between two watch events that ran it from %s: one more restart (new UID)", file, then),
		Detail: fmt.Sprintf("%s: the kubelet's relist at %s ran pod %s from %s again, the last file in sort order that defines it, after its watch had run it from %s and before it took that file's next write in: it gave the pod a new UID and restarted it, a restart between the two podwatch said as one",
			file, at.UTC().Format(time.RFC3339Nano), key, file, then),
	}, cl)
	return true
}

// emptyListing says a relist read no valid file, as podwatch's own view
// has it.
func emptyListing(l *model.Listing) bool {
	if l.Missing {
		return false
	}
	for _, f := range l.Files {
		if len(f.Reads) > 0 && f.Reads[0].Pod != nil {
			return false
		}
	}
	return true
}

// listedRead is what a relist read of path, in podwatch's own view, as a
// file for the words; nil when it found none.
func listedRead(l *model.Listing, path, name string) *types.File {
	for _, f := range l.Files {
		if f.Path != path || len(f.Reads) == 0 {
			continue
		}
		o := f.Reads[0]
		switch {
		case o.Pod != nil:
			return &types.File{Name: name, Pod: &types.Pod{Key: o.Pod.Key}}
		case errors.Is(o.Err, fs.ErrNotExist):
			return nil
		}
		return &types.File{Name: name, Err: o.Err}
	}
	return nil
}

// pendingInvalid are the invalid files of pending, by problem ID, with
// when each was first seen: a span too short to report may still be one
// a relist read (portWindow.shortSpan).
func pendingInvalid(pending map[string]time.Time) map[string]time.Time {
	var out map[string]time.Time
	for id, at := range pending {
		if id, ok := strings.CutPrefix(id, "problem/"); ok && strings.HasPrefix(id, "invalid/") {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[id] = at
		}
	}
	return out
}

// racedDrop words a REMOVE at the window's last relist, seen, of a file
// the detector saw written on both sides of that relist's open of it:
// the relist read one of the writes, a part, or the content from before
// them, so the next relist may be the one that stops the pod, and none
// does if the file is fixed first. "" for any other REMOVE.
func (w *portWindow) racedDrop(file string, cl *types.Claim) (effect, glance string) {
	c := w.c
	if !cl.MaySkip || !slices.ContainsFunc(c.snap.KubeletRelistRead.Written, func(x types.RelistWrite) bool { return x.Name == file && x.Before && x.After }) {
		return "", ""
	}
	at := w.ps.tl.Relisted().UTC().Format(time.RFC3339Nano)
	return fmt.Sprintf("the kubelet stopped it at its relist at %s if that relist read the write, which came as it read %s (a race podwatch cannot see); if it read the content from before, it stops it at its next relist instead, and never if the file is fixed first: the kubelet may skip this restart", at, file),
		"the kubelet stopped the pod at its relist if it read the write, or stops it at its next; if the file is fixed first, it may skip this restart"
}

// neverStopped says some way of key's part never stopped the pod that an
// ADD starts again: a REMOVE said before it, the kubelet may have
// skipped.
func (w *portWindow) neverStopped(key string) bool {
	part := w.e.Part(key)
	return part != nil && slices.ContainsFunc(part.Ends, func(end model.End) bool {
		r, ok := end.Runs[key]
		return ok && !slices.Contains(r, "")
	})
}

// bounce is a pod a relist dropped for a file it read mid-change, which
// the watch started again since.
type bounce struct {
	file string      // the file it read
	read *types.File // what podwatch has for the relist's read
	at   time.Time   // the relist's folder open
	// may: the file was written on both sides of the relist's open of
	// it, so the relist read one of the writes, or a part of one: the
	// drop is a race.
	may bool
	// during: the write came during the relist (else before it).
	during bool
	// revivedBy: the relist read no valid file, so it stopped every pod
	// and kept its store, and the watch event for this file, after the
	// relist, sent the store again (see revived).
	revivedBy string
}

// message says what the relist did to key's pod, for its REMOVE.
func (b bounce) message(key string) string {
	what := "not a pod"
	switch f := b.read; {
	case f == nil:
	case f.Err != nil:
		what = fmt.Sprintf("invalid: %v", f.Err)
	case f.Pod != nil:
		what = "defining pod " + f.Pod.Key
	}
	at := b.at.UTC().Format(time.RFC3339Nano)
	if b.revivedBy != "" {
		return fmt.Sprintf("static pod %s removed: the kubelet stopped every static pod at its relist at %s, which found no valid manifest in the folder; it kept its store, and the change to %s since brought them back",
			key, at, b.revivedBy)
	}
	if b.may {
		return fmt.Sprintf("static pod %s removed: the kubelet may have read %s mid-change at its relist at %s (written before and after the relist opened it, and read by podwatch %s), and so stopped the pod and started it again; if the relist read a whole valid write, the kubelet may skip this restart",
			key, b.file, at, what)
	}
	if !b.during {
		return fmt.Sprintf("static pod %s removed: the kubelet's relist read %s %s; the kubelet stopped the pod at its relist at %s, and its watch started it again since",
			key, b.file, what, at)
	}
	return fmt.Sprintf("static pod %s removed: %s was written during the kubelet's relist, before the relist read it %s; the kubelet stopped the pod at its relist at %s, and its watch started it again since",
		key, b.file, what, at)
}

// glance is the REMOVE's message: what the relist read and what the
// kubelet did; message says all of it, for the detail.
func (b bounce) glance() string {
	what := "not a pod"
	switch f := b.read; {
	case f == nil:
	case f.Err != nil:
		what = fmt.Sprintf("invalid (%s)", problem(f.Err))
	case f.Pod != nil:
		what = "defining pod " + f.Pod.Key
	}
	switch {
	case b.revivedBy != "":
		return fmt.Sprintf("no valid manifest when the kubelet's relist read the folder: it stopped the pod at its relist, and the change to %s since brought it back", b.revivedBy)
	case b.may:
		return fmt.Sprintf("%s read mid-change by the kubelet's relist: it may have stopped the pod at its relist and started it again; if the relist read a whole valid write, the kubelet may skip this restart", b.file)
	}
	return fmt.Sprintf("%s was %s as the kubelet's relist read it: it stopped the pod at its relist, and its watch started it again since", b.file, what)
}

// started is what an ADD says the kubelet does: for a pod a relist
// dropped and the watch started again since, what it did.
func (b bounce) started() string {
	if b.file == "" {
		return "the kubelet starts it"
	}
	if b.revivedBy != "" {
		return fmt.Sprintf("the kubelet's watch started it again, for the change to %s, after its relist at %s found no valid manifest", b.revivedBy, b.at.UTC().Format(time.RFC3339Nano))
	}
	out := fmt.Sprintf("the kubelet's watch started it again after its relist at %s dropped it", b.at.UTC().Format(time.RFC3339Nano))
	if b.may {
		out += "; if that relist read a whole valid write, the kubelet may skip this restart"
	}
	return out
}
