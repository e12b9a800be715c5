package diff

import (
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// A write that lands during the kubelet's relist, after its folder open
// and before its open of the file, is read by the relist: podwatch's
// clocks cannot say so (when it read the write says nothing of when the
// kubelet did), but the relist detector's queue orders the two exactly
// (Snapshot.KubeletRelistRead.Written). The relist is taken in late, often
// after the file changed again (an invalid edit fixed at once): the view
// keeps, per name the watch changed since the last relist taken in, each
// content podwatch read (versions), so that it knows what the relist
// read; the contents after it are the watch's, taken in after the relist.
// A pod that the relist dropped for what it read, and that the watch
// started again since, is a REMOVE and an ADD the kubelet made
// (bounced): nothing in the view's end state shows them.

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
	// said: its REMOVE went out (the bounce stays until the ADD after it
	// goes out too, for that ADD's message).
	said bool
	// revivedBy: the relist read no valid file, so it stopped every pod
	// and kept its store, and the watch event for this file, after the
	// relist, sent the store again (see revived).
	revivedBy string
	// removeID is its REMOVE's claim, which the ADD after it goes with.
	removeID uint64
}

// noteVersion records f, a content of name the watch took in.
func (v *kubeletView) noteVersion(name string, f *types.File) {
	vs := v.versions[name]
	if n := len(vs); n > 0 && (vs[n-1] == f || vs[n-1].ChangedAt.Equal(f.ChangedAt)) {
		return // the same content (a chmod keeps ChangedAt)
	}
	if v.versions == nil {
		v.versions = map[string][]*types.File{}
	}
	v.versions[name] = append(slices.Clip(vs), f)
}

// versionsAfter is, for each of snap's files changed after a relist whose
// folder open the detector saw at at (later), the contents of it podwatch
// read after at, the current one last: what the watch took in after that
// relist, which the next relist may have read. Those read before at were
// the relist's.
func (v *kubeletView) versionsAfter(snap types.Snapshot, at time.Time, later func(*types.File) bool) map[string][]*types.File {
	var out map[string][]*types.File
	for _, f := range snap.Files {
		if !later(f) {
			continue
		}
		var vs []*types.File
		for _, g := range v.versions[f.Name] {
			if g.ChangedAt.After(at) && g != f && !g.ChangedAt.Equal(f.ChangedAt) {
				vs = append(vs, g)
			}
		}
		if out == nil {
			out = map[string][]*types.File{}
		}
		out[f.Name] = append(vs, f)
	}
	return out
}

// readByRelist is the content of f's name a relist read when a write came
// between its folder open and its open of the file, after at (when the
// detector last found its queue empty before that write, else when it
// saw the folder open): the first content podwatch read after at
// (podwatch reads a write after it lands), else the one it has now. It returns too whether a content
// after that one was taken in by the watch: the relist's read is not the
// last word.
func (v *kubeletView) readByRelist(f *types.File, at time.Time) (read *types.File, changedSince bool) {
	if g := v.firstAfter(f.Name, at); g != nil {
		return g, g != f && !g.ChangedAt.Equal(f.ChangedAt)
	}
	return f, false
}

// firstAfter is the first content of name podwatch read after at, among
// those the watch took in since the last relist; nil when none.
func (v *kubeletView) firstAfter(name string, at time.Time) *types.File {
	for _, g := range v.versions[name] {
		if g.ChangedAt.After(at) {
			return g
		}
	}
	return nil
}

// readBefore is the content of f's name podwatch read last at or before
// at, among those the watch took in since the last relist; nil when it
// kept none. A relist whose folder open the detector saw at at, which saw
// no write to the file while it ran, read that: podwatch read it before
// the detector read the open, so it was written before the relist read
// the file, and a later write came after the relist was recognised.
func (v *kubeletView) readBefore(f *types.File, at time.Time) *types.File {
	var out *types.File
	for _, g := range v.versions[f.Name] {
		if g.ChangedAt.After(at) {
			break
		}
		out = g
	}
	return out
}

// readAtOpen is the content of f's name a relist whose folder open the
// detector saw at at read, when the watch took a content in after at and
// the detector saw no write to the file while the relist ran: what
// podwatch read last at or before at, unless the detector saw a write
// just before the open, after since, that podwatch read only after at;
// then the first content podwatch read after since. nil when podwatch
// kept none.
func (v *kubeletView) readAtOpen(f *types.File, at, since time.Time) *types.File {
	r := v.readBefore(f, at)
	if since.IsZero() || r != nil && r.ChangedAt.After(since) {
		return r
	}
	if g := v.firstAfter(f.Name, since); g != nil {
		return g
	}
	return r
}

// gives says whether f, the current content of a file the relist read
// mid-change, gives key its pod: the watch took it in after the relist,
// so its pod stands over what the relist read.
func gives(f *types.File, key string) bool {
	return validPod(f) && f.Pod.Key == key
}

// midRelistWritten indexes snap's files written during the relist.
func midRelistWritten(snap types.Snapshot) map[string]types.RelistWrite {
	if len(snap.KubeletRelistRead.Written) == 0 {
		return nil
	}
	out := make(map[string]types.RelistWrite, len(snap.KubeletRelistRead.Written))
	for _, w := range snap.KubeletRelistRead.Written {
		out[w.Name] = w
	}
	return out
}

// priorWritten indexes when the detector found its queue empty before
// the writes it saw just before the relist's folder open, by name.
func priorWritten(snap types.Snapshot) map[string]time.Time {
	if len(snap.KubeletRelistRead.Prior) == 0 {
		return nil
	}
	out := make(map[string]time.Time, len(snap.KubeletRelistRead.Prior))
	for _, w := range snap.KubeletRelistRead.Prior {
		out[w.Name] = w.Since
	}
	return out
}

// bounceMessage says what the relist did to key's pod, for its REMOVE.
func (b bounce) message(key string) string {
	what := "not a pod"
	switch f := b.read; {
	case f == nil:
	case f.Err != nil:
		what = fmt.Sprintf("invalid: %v", f.Err)
	case f.ReadErr != nil:
		what = fmt.Sprintf("unreadable to podwatch: %v", f.ReadErr)
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
	case f.ReadErr != nil:
		what = "unreadable to podwatch"
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

// bounces says, for each pod a relist taken in now dropped for a file it
// read mid-change and the watch started again since, the REMOVE it made;
// the pod's ADD follows from desired.
func (c *computation) bounces(desired map[string]want) {
	for _, key := range slices.Sorted(maps.Keys(c.kv.bounced)) {
		p, had := c.next.Pods[key]
		w, ok := desired[key]
		if !had || !ok || (w.file == nil && w.keep == nil) {
			continue
		}
		b := c.kv.bounced[key]
		if b.said {
			continue
		}
		b.said = true
		c.ownPods()
		delete(c.next.Pods, key)
		c.claimFresh()
		c.cl.relist = true
		b.removeID = c.emit(types.Change{
			Op: types.OpRemove, Type: v1.EventTypeWarning, Reason: types.ReasonRemoved, Object: podObject(key), File: b.file, At: b.at, MaySkip: b.may,
			ID: changeID(key, types.OpRemove, nil), Key: transition(types.ReasonRemoved, b.file, p.identity(), ""),
			Message: b.glance(), Detail: b.message(key),
		})
		c.kv.bounced[key] = b
		if w.file == nil {
			desired[key] = want{keep: p, revive: true} // from its last good parse
		}
	}
}

// revived is replace's case of a relist that read no valid file (store is
// empty) taken in after a watch event that changed the store since (a
// valid write or a deletion; an invalid write's event sends nothing):
// the kubelet's relist stopped every pod and kept its store, and that
// event sent the store again, so each pod of it that the relist found
// there stopped and started again. podwatch played the event before it
// took the relist in, so the view's store already holds what the event
// brought; it stays, and store takes it. It reports whether it did.
func (v *kubeletView) revived(snap types.Snapshot, store map[string]string, at time.Time, later func(*types.File) bool, mid bool) bool {
	if len(store) > 0 || len(v.store) == 0 || v.empty || mid {
		return false
	}
	by := ""
	if !at.IsZero() && v.sent.After(at) {
		by = v.sentBy
	}
	if by == "" {
		return false // no event since: the relist's empty list stands (replace)
	}
	for key, name := range v.store {
		f := lookup(snap.Files, name)
		if f == nil || later(f) {
			continue // not there at the relist, or there by the event
		}
		if v.bounced == nil {
			v.bounced = map[string]bounce{}
		}
		v.bounced[key] = bounce{file: name, read: f, at: at, revivedBy: by}
	}
	maps.Copy(store, v.store)
	return true
}
