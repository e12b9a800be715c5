package diff

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podwatch/podwatch/pkg/types"
)

// Compute compares the published state with a snapshot of the folder and
// returns the changes to publish, the state to keep, and when to call again
// on the same snapshot because something is waiting to settle (zero when
// nothing is). prev is left as it was.
func Compute(prev State, snap types.Snapshot, now time.Time, opts Options) ([]types.Change, State, time.Time) {
	return compute(prev, snap, now, opts, false)
}

// Advance is Compute for a caller that keeps one State and replaces it with
// each result: *s becomes the next State, its maps changed in place where
// Compute would copy them, so that one change in a large folder does not
// copy every published pod. A State handed to anyone else must be taken
// with Share, which makes the next Advance copy first.
func Advance(s *State, snap types.Snapshot, now time.Time, opts Options) ([]types.Change, time.Time) {
	if !s.owned {
		*s = s.cloneSharingPods()
		s.Pods = maps.Clone(s.Pods)
	}
	changes, next, recheck := compute(*s, snap, now, opts, true)
	next.owned = true
	*s = next
	return changes, recheck
}

// Share returns s for another holder, such as the persister's goroutine, to
// keep: the maps it shares with s are never changed again, as the next
// Advance of s copies them first.
func (s *State) Share() State {
	s.owned = false
	return *s
}

func compute(prev State, snap types.Snapshot, now time.Time, opts Options, inPlace bool) ([]types.Change, State, time.Time) {
	c := &computation{
		snap:        snap,
		now:         now,
		opts:        opts.withDefaults(),
		livePending: map[string]bool{},
		liveProblem: map[string]bool{},
	}
	if inPlace {
		c.next = prev.withMaps()
		c.podsOwned = true
	} else {
		c.next = prev.cloneSharingPods()
	}
	c.next.base = nil
	c.inventory, c.next.Inventory = prev.Inventory, false
	if c.opts.Engine == EnginePort {
		return c.portStep(prev, inPlace)
	}
	heldUp := c.heldUp(prev.kubelet)
	again := prev.kubelet.relistAgain(snap)
	c.takeIn(prev.kubelet, inPlace)
	c.release(heldUp)
	if c.kv.watchGone && !c.relisted && !again && snap.PathErr == nil {
		// The kubelet takes in nothing before its next relist: neither
		// does podwatch, so what it says is what that relist does. A
		// recheck of the snapshot that brought a relist goes on: what that
		// relist did may wait for the settle delay.
		c.next.base = nil
		c.next.Inventory = c.inventory
		return nil, c.next, time.Time{}
	}
	if c.incremental(prev.base) {
		c.sweep(c.touchedIDs())
	} else {
		c.run()
		c.sweepAll()
	}
	c.wentBack()
	c.settleOwed()
	c.amend()
	c.next.base = c.baseline()
	return c.changes, c.next, c.recheck
}

// takeIn plays the snapshot to the kubelet's file source as followed in
// kv, changing kv in place when inPlace.
func (c *computation) takeIn(kv *kubeletView, inPlace bool) {
	if !inPlace {
		kv = kv.clone()
	}
	c.relisted, c.estimated = kubeletRelisted(kv, c.snap)
	c.kv = kv.step(c.snap, c.relisted, c.opts.RelistPeriod)
	c.next.kubelet = c.kv
}

// heldUp names, per key, the new file whose UPDATE waits to see whether
// the file goes again at once (see update), as kv's store has it before a
// relist; nil for any other snapshot.
func (c *computation) heldUp(kv *kubeletView) map[string]string {
	if kv == nil || c.snap.PathErr != nil {
		return nil
	}
	if relisted, _ := kubeletRelisted(kv, c.snap); !relisted {
		return nil
	}
	var out map[string]string
	for name := range kv.born {
		key, ok := kv.keys[name]
		if _, waits := c.next.Pending["pod/"+key]; !ok || !waits || kv.store[key] != name {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = name
	}
	return out
}

// release says the UPDATEs held for new files still there at a relist:
// the file outlived the kubelet's read of it, which ran its pod until this
// relist. The relist's own change, back to the winner, follows.
func (c *computation) release(held map[string]string) {
	for key, name := range held {
		p, ok := c.next.Pods[key]
		if f := c.file(name); ok && f != nil && validPod(f) && f.Pod.Key == key && p.File != name {
			c.update(key, *p, f)
		}
	}
}

// sweepAll forgets what this step found no longer there: pending waits and
// reported problems nothing looked at again.
func (c *computation) sweepAll() {
	for id := range c.next.Pending {
		if !c.livePending[id] {
			delete(c.next.Pending, id)
		}
	}
	for id := range c.next.Reported {
		if !c.liveProblem[id] {
			delete(c.next.Reported, id)
		}
	}
}

type computation struct {
	snap    types.Snapshot
	now     time.Time
	opts    Options
	next    State
	changes []types.Change
	recheck time.Time

	livePending map[string]bool
	liveProblem map[string]bool
	inventory   bool // nothing was published before: pods are found, not added
	podsOwned   bool // next.Pods is a copy, no longer prev's
	plain       bool // the plain path ran: every valid file is its pod's winner
	// touched are the files the incremental step looked at, sorted.
	touched []string
	// kv is the kubelet's file source after this snapshot; relisted says
	// the kubelet relisted with it, estimated that podwatch's own relist
	// stands in for one it did not see.
	kv                  *kubeletView
	relisted, estimated bool
	// bounded says the message of the change about to be emitted counts
	// the restarts the kubelet's watch makes on its way, with no sign
	// that its file source runs behind (see behind, amend).
	bounded bool
	// cl is what the change about to be emitted says of the kubelet, as
	// its words are decided (see claim.go).
	cl claimParts
	// portPods leaves the pod changes to the port engine (see port.go);
	// window is its window after this snapshot, the zero portView when
	// the snapshot was not taken in (podwatch could not read the folder).
	portPods bool
	window   portView
	// keptInvalid: a file's problem said the kubelet runs its last good
	// parse on, which a step that looks only at the files it names would
	// not say again should that change.
	keptInvalid bool
}

// ownPods copies the published pods before the first write: a step that
// changes no pod (a relist, a problem) then costs no copy of them.
func (c *computation) ownPods() {
	if !c.podsOwned {
		c.next.Pods = maps.Clone(c.next.Pods)
		if c.next.Pods == nil {
			c.next.Pods = map[string]*PodState{}
		}
		c.podsOwned = true
	}
}

// file finds a file of the snapshot by name: Files is sorted, and a
// binary search spares each change a map of every file.
func (c *computation) file(name string) *types.File {
	return lookup(c.snap.Files, name)
}

// want is the file the kubelet takes a pod from.
type want struct {
	file *types.File
	// keep is set when the kubelet runs the pod from an earlier read than
	// the file's content now (unreadable or invalid since): the last
	// published one, or with revive one it had let go and takes back.
	keep   *PodState
	revive bool
}

func (c *computation) node() types.Object {
	return types.Object{Kind: types.KindNode, Name: c.opts.NodeName}
}

func (c *computation) run() {
	c.watchProblem()
	var desired map[string]want
	removeWhy := map[string]string{}
	switch {
	case c.snap.PathErr != nil && errors.Is(c.snap.PathErr, fs.ErrNotExist):
		// The kubelet's relist sends an empty pod list: every pod goes.
		c.problem("path", time.Time{}, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonPathMissing, Object: c.node(), Key: problemKey("path", "not-exist"),
			Message: fmt.Sprintf("manifest path %s does not exist: the kubelet runs no static pods from it", c.opts.Path),
		})
		if c.portPods {
			return
		}
		desired = map[string]want{}
		for key := range c.next.Pods {
			removeWhy[key] = fmt.Sprintf("manifest path %s does not exist", c.opts.Path)
		}
	case c.snap.PathErr != nil:
		// podwatch's own failure, not the kubelet's verdict: keep the pods.
		c.problem("path", time.Time{}, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonUnreadable, Object: c.node(), Key: problemKey("path", fault(c.snap.PathErr)),
			Message: fmt.Sprintf("cannot read manifest path %s: %v; keeping the last known static pods", c.opts.Path, c.snap.PathErr),
		})
		return
	case c.portPods:
		// The port decides the pods: only the files' own problems here.
		c.fileProblems()
		c.duplicates(c.definers())
		return
	default:
		if plan, ok := c.plainPlan(); ok {
			c.plain = true
			c.fileProblems()
			c.plainChanges(plan)
			return
		}
		desired = c.desired()
	}
	c.podChanges(desired, removeWhy)
}

// desired is the set of pods the kubelet's next relist ends with, and it
// reports the per-file problems on the way.
func (c *computation) desired() map[string]want {
	desired := make(map[string]want, len(c.snap.Files))
	// dups holds only the keys two or more files define: most folders have
	// none, and a map of every key would cost each change an allocation
	// per file.
	var dups map[string][]*types.File
	unreadable := c.fileProblems()
	for i := range c.snap.Files {
		f := c.snap.Files[i]
		if !validPod(f) {
			continue
		}
		if prev, ok := desired[f.Pod.Key]; ok {
			if dups == nil {
				dups = map[string][]*types.File{}
			}
			if len(dups[f.Pod.Key]) == 0 {
				dups[f.Pod.Key] = []*types.File{prev.file}
			}
			dups[f.Pod.Key] = append(dups[f.Pod.Key], f)
		}
		desired[f.Pod.Key] = want{file: f} // the last in sort order wins
	}
	c.duplicates(dups)
	if !c.snap.Single {
		return c.kubeletRuns()
	}
	for key, p := range c.next.Pods {
		if _, ok := desired[key]; ok {
			continue
		}
		// A file podwatch cannot read still runs for the kubelet, and in
		// single-file mode the kubelet keeps the last good pod.
		f := c.file(p.File)
		if unreadable[p.File] || (f != nil && f.Err != nil) {
			desired[key] = want{keep: p}
		}
	}
	return desired
}

// definers holds, per key two or more valid files define, those files in
// name order.
func (c *computation) definers() map[string][]*types.File {
	first := make(map[string]*types.File, len(c.snap.Files))
	var dups map[string][]*types.File
	for _, f := range c.snap.Files {
		if !validPod(f) {
			continue
		}
		prev, ok := first[f.Pod.Key]
		if !ok {
			first[f.Pod.Key] = f
			continue
		}
		if dups == nil {
			dups = map[string][]*types.File{}
		}
		if len(dups[f.Pod.Key]) == 0 {
			dups[f.Pod.Key] = []*types.File{prev}
		}
		dups[f.Pod.Key] = append(dups[f.Pod.Key], f)
	}
	return dups
}

// duplicates reports each key dups holds: the files that define it, in
// name order, the last of which the kubelet runs it from at a relist.
func (c *computation) duplicates(dups map[string][]*types.File) {
	for _, key := range slices.Sorted(maps.Keys(dups)) {
		fs := dups[key]
		names := make([]string, len(fs))
		var since time.Time
		for i, f := range fs {
			names[i] = f.Name
			since = types.Later(since, f.ChangedAt)
		}
		winner := fs[len(fs)-1]
		c.problem("duplicate/"+key, since, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonDuplicate, Object: podObject(key), File: winner.Name,
			Key: problemKey("duplicate/"+key, "", names...),
			Message: fmt.Sprintf("%s shadows %s: the kubelet runs the pod from it; an edit of another restarts it until the next relist",
				winner.Name, strings.Join(names[:len(names)-1], ", ")),
			Detail: fmt.Sprintf("pod %s is defined by %s; the kubelet runs the one from %s (last in sort order) at each relist, and shadows the others; "+
				"but a write, chmod or delete of one still acts on the kubelet's watch, and restarts (or stops) the pod until its next relist",
				key, strings.Join(names, ", "), winner.Name),
		})
	}
}

// kubeletRuns is desired as the kubelet's file source has it (see
// kubeletView): each pod from the file its store last read it from, or,
// where that file no longer gives it, from its last good parse.
func (c *computation) kubeletRuns() map[string]want {
	running := c.kv.running()
	desired := make(map[string]want, len(running))
	for key, name := range running {
		f := c.file(name)
		if f != nil && validPod(f) && f.Pod.Key == key {
			desired[key] = want{file: f}
			continue
		}
		if _, full := c.invalidPeriod(name); full && f != nil && f.Err != nil {
			continue // a relist of the kubelet's fell within: the pod is gone
		}
		if p, ok := c.next.Pods[key]; ok {
			desired[key] = want{keep: p}
		} else if p, ok := c.kv.held[key]; ok {
			desired[key] = want{keep: p, revive: true}
		}
	}
	return desired
}

// fileProblems reports each file's own problem (unreadable, invalid,
// ignored content) and returns the names of the unreadable files.
func (c *computation) fileProblems() map[string]bool {
	var unreadable map[string]bool
	for _, f := range c.snap.Files {
		if c.fileProblem(f) {
			if unreadable == nil {
				unreadable = map[string]bool{}
			}
			unreadable[f.Name] = true
		}
	}
	return unreadable
}

// fileProblem reports f's own problem, if any, and whether f is unreadable.
func (c *computation) fileProblem(f *types.File) bool {
	switch {
	case f.NotRegular:
	case f.ReadErr != nil:
		c.problem("unreadable/"+f.Name, f.ChangedAt, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonUnreadable, Object: c.node(), File: f.Name,
			Key:     problemKey("unreadable/"+f.Name, fault(f.ReadErr)),
			Message: fmt.Sprintf("%s: podwatch cannot read it: %v; keeping its last known pod", f.Name, f.ReadErr),
		})
		return true
	case f.Err != nil:
		detail := fmt.Sprintf("%s: %v", f.Name, f.Err)
		msg := fmt.Sprintf("%s is invalid (%s)", f.Name, problem(f.Err))
		if key, ok := c.runsFrom(f.Name); ok && !c.snap.Single && c.next.Pods[key] != nil {
			detail += fmt.Sprintf("; the kubelet keeps running pod %s from its last good parse and stops it at its next relist%s unless the file is fixed", key, c.within())
			msg += fmt.Sprintf(": the kubelet stops %s at its next relist", podName(key))
			c.keptInvalid = true
			if c.opts.RelistPeriod > 0 {
				msg += ", within " + c.opts.RelistPeriod.String()
			}
		}
		c.problem("invalid/"+f.Name, f.ChangedAt, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonInvalid, Object: c.node(), File: f.Name,
			Key:     problemKey("invalid/"+f.Name, fault(f.Err)),
			Message: msg,
			Detail:  detail,
		})
	case f.Pod != nil && len(f.Pod.Ignored) > 0:
		c.problem("ignored/"+f.Name, f.ChangedAt, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonIgnored, Object: c.node(), File: f.Name,
			Key:     problemKey("ignored/"+f.Name, ""),
			Message: ignoredMessage(f),
		})
	}
	return false
}

// runsFrom says the kubelet runs, from the file name, the pod of the key
// the file last gave its store, which it names: under the port, as the
// port's own view has it at the end of the window; else as kubeletView
// does, which runs nothing after an empty relist.
func (c *computation) runsFrom(name string) (string, bool) {
	if c.portPods {
		if c.window.ps == nil {
			return "", false
		}
		return c.window.runsFrom(pathIn(c.snap, name))
	}
	key, ok := c.kv.keys[name]
	return key, ok && !c.kv.empty && c.kv.store[key] == name
}

// watchGone says the kubelet's watch of the folder ended with the folder
// (see kubeletView.watchGone, model.Timeline.Unwatched): it takes changes
// in at its relists alone.
func (c *computation) watchGone() bool {
	if c.portPods {
		return c.next.port != nil && c.next.port.tl.Unwatched()
	}
	return c.kv != nil && c.kv.watchGone
}

func (c *computation) podChanges(desired map[string]want, removeWhy map[string]string) {
	if c.portPods {
		return
	}
	// Visit in map order and sort only what is emitted: sorting every key
	// would cost each change O(n log n) in a folder of thousands.
	first := len(c.changes)
	c.bounces(desired)
	c.shortInvalid(desired)
	for key, w := range desired {
		p, had := c.next.Pods[key]
		switch {
		case w.revive:
			c.revive(key, *w.keep)
		case w.keep != nil:
		case !had:
			c.add(key, w.file)
		default:
			c.update(key, *p, w.file)
		}
	}
	for key, p := range c.next.Pods {
		if _, ok := desired[key]; !ok {
			c.remove(key, *p, removeWhy[key])
		}
	}
	sortByPod(c.changes[first:])
	c.renumber(first)
}

// sortByPod orders a step's pod changes by namespace/name, whichever path
// computed them, so the output does not depend on map order.
func sortByPod(changes []types.Change) {
	sort.SliceStable(changes, func(i, j int) bool {
		a, b := changes[i].Object, changes[j].Object
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
}

// validPod says whether f holds a pod the kubelet would run.
func validPod(f *types.File) bool {
	return !f.NotRegular && f.ReadErr == nil && f.Err == nil && f.Pod != nil
}

func (c *computation) add(key string, f *types.File) {
	if !c.fresh("pod/"+key, f) {
		return
	}
	c.ownPods()
	c.next.Pods[key] = published(f)
	c.claimFresh()
	if c.inventory {
		c.found(key, f)
		return
	}
	effect, maySkip := c.started(key, f)
	c.emit(addChange(key, f, v1.EventTypeNormal, c.startMessage(f, effect, maySkip),
		fmt.Sprintf("%s: static pod %s added (%s); %s", f.Name, key, images(f), c.watchless(effect)), maySkip))
}

// addChange is the ADD of key's pod from f, in the words given.
func addChange(key string, f *types.File, typ, msg, detail string, maySkip bool) types.Change {
	return types.Change{
		Op: types.OpAdd, Type: typ, Reason: types.ReasonAdded, Object: podObject(key), File: f.Name, Hash: f.Pod.Hash,
		Pod: f.Pod, At: f.ChangedAt, MaySkip: maySkip,
		ID:      changeID(key, types.OpAdd, f),
		Key:     transition(types.ReasonAdded, f.Name, "", fileIdentity(f)),
		Message: msg,
		Detail:  detail,
	}
}

// found says a pod found at a start with no published state: the kubelet
// may have run it for long, or start it now (a boot), which the diff cannot
// tell; whoever reads the running pods words it (pkg/follow), and without
// one the message says podwatch cannot tell.
func (c *computation) found(key string, f *types.File) {
	c.emit(foundChange(key, f))
}

// foundChange is the change found says.
func foundChange(key string, f *types.File) types.Change {
	seen := &types.Found{Case: types.FoundUnknown, Head: fmt.Sprintf("%s (%s)", f.Name, runs(f))}
	return types.Change{
		Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonFound, Object: podObject(key), File: f.Name, Hash: f.Pod.Hash,
		Pod: f.Pod, At: f.ChangedAt, Found: seen,
		ID:      changeID(key, types.OpAdd, f),
		Key:     transition(types.ReasonFound, f.Name, "", fileIdentity(f)),
		Message: seen.Message(),
		Detail:  fmt.Sprintf("%s: static pod %s found at podwatch's first start, with no published state (%s)", f.Name, key, images(f)),
	}
}

// started is what an ADD of f's pod says the kubelet does, and whether it
// may not do it at all.
func (c *computation) started(key string, f *types.File) (string, bool) {
	if s := c.fixedStarted(key, f); s != "" {
		c.cl.with = c.kv.fixed[key].removeID
		return s, true
	}
	if s := c.racedStart(key, f.Name); s != "" {
		c.cl.with = c.kv.raced[key].removeID
		return s, true
	}
	b := c.kv.bounced[key]
	c.cl.with = b.removeID
	return b.started(), b.file != "" && b.may
}

func (c *computation) update(key string, p PodState, f *types.File) {
	contentChanged := p.Hash != f.Pod.Hash
	// restyled: what the API would see is the same, but the kubelet's
	// config hash is not (an empty list written out, a quantity respelt).
	restyled := !contentChanged && p.Config != "" && p.Config != f.Pod.Config
	fileChanged := p.File != f.Name
	if !contentChanged && !restyled && !fileChanged {
		if p.Config == "" && f.Pod.Config != "" {
			c.ownPods() // a state from before Config: keep it from now on
			c.next.Pods[key] = published(f)
		}
		return
	}
	id := "pod/" + key
	if at, ok := c.kv.born[f.Name]; ok && fileChanged && !c.snap.Single && !c.settled(id, at) {
		// A file just created takes the pod: it may be a temp file
		// renamed over another a moment later, and whether the kubelet
		// read it first is a race. Held, the UPDATE from the rename's
		// target says it may have (see onTheWay).
		return
	}
	if contentChanged || restyled {
		if !c.fresh(id, f) {
			return
		}
	} else {
		// Only the winning file changed: typical of an editor's backup
		// or a leftover .bak; bad news, so it must persist first.
		since := f.ChangedAt
		if old := c.file(p.File); old != nil {
			since = types.Later(since, old.ChangedAt)
		}
		if !c.settled(id, since) {
			return
		}
	}
	c.claimFresh()
	fields, describeErr := describe(p, f.Pod, c.next.Salt)
	uidPinned := f.Pod.UID != "" && p.UID == f.Pod.UID
	c.ownPods()
	c.next.Pods[key] = published(f)
	if uidPinned && len(fields) == 0 && describeErr == nil {
		return // the kubelet compares only spec, labels and annotations
	}
	parts := c.updateParts(p, f, fields, describeErr)
	facts := len(parts) // the rest are hedges, and the shadow's return
	if way := c.onTheWay(key, p.File, ""); way != "" {
		parts = append(parts, way)
	}
	if name := c.kv.mayDrop[key]; name != "" {
		parts = append(parts, fmt.Sprintf("if the kubelet read %s before it went, its deletion stops the pod until the next relist starts it again", name))
		c.cl.after = 1
		c.noteVia(name)
	}
	if fixed := c.fixedUpdate(key, f); fixed != "" {
		parts = append(parts, fixed)
		c.cl.after = 1
	}
	if name := c.kv.replayDropOf(key); name != "" {
		parts = append(parts, fmt.Sprintf("the kubelet may stop the pod and start it again once (a race: a relist of its may read the folder before its watch takes in %s's going)", name))
		c.cl.after = 1
		c.noteVia(name)
	}
	maySkip := !c.snap.Single && c.kv.midWrite(f)
	if maySkip {
		parts = append(parts, fmt.Sprintf("read while %s was still open for writing: the kubelet may read only the whole and skip this restart", f.Name))
	}
	shadow := !c.snap.Single && shadowed(c.snap.Files, f)
	if shadow {
		parts = append(parts, fmt.Sprintf("the kubelet took %s in on its watch and runs it until its next relist, which goes back to the last file in sort order that defines the pod (a second restart)", f.Name))
	}
	effect := "the kubelet gives the pod a new UID and restarts it"
	if uidPinned {
		effect = "metadata.uid is set, so the kubelet updates the pod in place"
	}
	hedges := parts[facts:]
	if shadow {
		hedges = hedges[:len(hedges)-1]
	}
	c.emit(types.Change{
		Op: types.OpUpdate, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Object: podObject(key), File: f.Name, Hash: f.Pod.Hash,
		Pod: f.Pod, At: c.changeAt(key, f, fileChanged), Back: c.takeBack(key, f, fileChanged), MaySkip: maySkip,
		ID:      changeID(key, types.OpUpdate, f),
		Key:     transition(types.ReasonUpdated, f.Name, p.identity(), fileIdentity(f)),
		Message: c.updated(key, p, f, updateFacts{fields: fields, describeErr: describeErr, content: contentChanged, restyled: restyled, respelt: respelt(p.Spelt, f.Pod.Spelt), uidPinned: uidPinned, shadow: shadow}, hedges),
		Detail:  fmt.Sprintf("%s: %s; %s", f.Name, strings.Join(parts, "; "), c.watchless(effect)),
	})
	if shadow {
		// relistWinner scans the folder: only for a shadowed file.
		if w := relistWinner(c.snap.Files, key); w != nil {
			c.kv.oweReturn(key, f.Name, w.Name)
		}
	}
}

// updateParts are the facts an UPDATE's detail says of the change from p
// to f: the fields that changed (fields, or describeErr when they could
// not be told), and a change of file.
func (c *computation) updateParts(p PodState, f *types.File, fields []fieldChange, describeErr error) []string {
	var parts []string
	switch {
	case describeErr != nil:
		parts = append(parts, fmt.Sprintf("content changed (%v)", describeErr))
	case len(fields) > 0:
		parts = append(parts, summarize(fields, c.opts.MaxFieldChanges))
	case p.Hash != f.Pod.Hash:
		parts = append(parts, "metadata changed")
	case p.Config != "" && p.Config != f.Pod.Config:
		if r := respelt(p.Spelt, f.Pod.Spelt); len(r) > 0 {
			parts = append(parts, strings.Join(r, "; ")+" (the same quantity spelt another way, which the kubelet's config hash sees)")
		} else {
			parts = append(parts, "no field changed, but the manifest changed in a way the kubelet's config hash sees (an empty list or map written out or dropped, or a default written out)")
		}
	}
	if p.File != f.Name {
		parts = append(parts, fmt.Sprintf("now from %s (was %s)", f.Name, p.File))
	}
	return parts
}

// takeBack is the window of a change to f's pod that a relist podwatch
// did not see makes, taking back the pod the kubelet ran from f before a
// watch event gave it another file (see types.TakeBack); zero for any
// other change. At is then podwatch's own relist, after the kubelet's
// may have been and gone: the window lets a follower count the pod the
// kubelet started in between.
func (c *computation) takeBack(key string, f *types.File, fileChanged bool) types.TakeBack {
	if !c.relisted || !c.estimated || !fileChanged {
		return types.TakeBack{}
	}
	if b, ok := c.kv.takenBack[key]; ok && b.file == f.Name {
		return b.back
	}
	return types.TakeBack{}
}

func (c *computation) remove(key string, p PodState, why string) {
	c.claimFresh()
	unsure, maySkip := false, false
	typ := v1.EventTypeWarning
	var since time.Time
	effect := "the kubelet stops it"
	// head and glance are the message's first clause: the file and what
	// the kubelet does; why and effect say all of it, for the detail.
	head, glance := why, ""
	file := p.File
	by, dropped := c.kv.dropped[key]
	young := dropped && by != p.File && c.young(by)
	if w, ok := c.kv.waiting[key]; ok && !dropped {
		by, dropped, young = w.by, true, w.young
	}
	if why == "" {
		f := c.file(p.File)
		switch {
		case young:
			// The kubelet took by in only if it read it before it went,
			// a race: podwatch never said it did. The REMOVE waits; a
			// file that gives the pod back meanwhile makes it an UPDATE
			// that says so.
			file = by
			why = fmt.Sprintf("%s was removed, new and gone within %s; if the kubelet's watch read it first (a race podwatch cannot see), it drops the pod that name last gave it, though it ran from %s", by, c.opts.SettleDelay, p.File)
			head = fmt.Sprintf("%s, new and gone within %s, was removed (the pod ran from %s)", by, c.opts.SettleDelay, p.File)
			glance = "the kubelet stops the pod if its watch read that name first (a race)"
			c.kv.owe(key, by)
			unsure = true
		case dropped && by != p.File:
			// The kubelet drops the pod a deleted name last gave, though
			// it ran from another file.
			file = by
			why = fmt.Sprintf("%s was removed, and the kubelet drops the pod that name last gave it, though it ran from %s", by, p.File)
			head = fmt.Sprintf("%s was removed (the pod ran from %s)", by, p.File)
		case c.kv.empty && len(c.kv.store) > 0:
			if f != nil {
				since = f.ChangedAt
			}
			why = fmt.Sprintf("the kubelet's relist found no valid manifest in %s", c.opts.Path)
			head = "no valid manifest in " + c.opts.Path
			if f != nil && f.Err != nil {
				why = fmt.Sprintf("%s is invalid: %v, and the kubelet's relist found no other valid manifest in %s", p.File, f.Err, c.opts.Path)
				head = fmt.Sprintf("%s is invalid (%s), and no other manifest is valid", p.File, problem(f.Err))
			}
			effect = c.atRelistThen("the kubelet stops it", ", and starts it again from its last good parse at the next change to a valid manifest")
			if raced := c.racedRemove(key, p.File); raced != "" {
				effect, maySkip = raced, true
				glance = "the kubelet stopped the pod at its relist if it read the write, or stops it at its next; if the file is fixed first, it may skip this restart"
			}
			c.kv.hold(key, p)
		case f == nil:
			why = p.File + " was removed"
			head = why
			if !dropped || relistWinner(c.snap.Files, key) == nil {
				typ = v1.EventTypeNormal
			}
		case f.Err != nil:
			why = fmt.Sprintf("%s is invalid: %v", p.File, f.Err)
			head = fmt.Sprintf("%s is invalid (%s)", p.File, problem(f.Err))
			since = f.ChangedAt
			effect = c.atRelist("the kubelet stops it")
			if raced := c.racedRemove(key, p.File); raced != "" {
				effect, maySkip = raced, true
				glance = "the kubelet stopped the pod at its relist if it read the write, or stops it at its next; if the file is fixed first, it may skip this restart"
			}
			if from, full := c.invalidPeriod(p.File); full {
				effect = fmt.Sprintf("it has been for a full relist period (%s) since %s, so a relist of the kubelet's fell within that time, and stopped it; podwatch did not see that relist, so this time is an estimate",
					c.opts.RelistPeriod, from.UTC().Format(time.RFC3339Nano))
				head = fmt.Sprintf("%s invalid for %s (%s)", p.File, c.opts.RelistPeriod, problem(f.Err))
				glance = "the kubelet stopped the pod at a relist; its time is an estimate"
				c.cl.relist, c.cl.estimate = true, true
			}
		case f.Pod != nil:
			why, typ = fmt.Sprintf("%s now defines pod %s", p.File, f.Pod.Key), v1.EventTypeNormal
			head = why
			since = f.ChangedAt
			effect = c.atRelist("the kubelet stops it")
		default:
			why = p.File + " is no longer a regular file"
			head = why
			since = f.ChangedAt
			effect = c.atRelist("the kubelet stops it")
		}
	}
	// A name new and gone at once drops the pod only if the kubelet read
	// it first: then taking it in was a restart on the way as well.
	except := by
	if young {
		except = ""
	}
	var hedges []string
	if way := c.onTheWay(key, p.File, except); way != "" {
		why += "; " + way
		hedges = append(hedges, way)
	}
	if dropped {
		// Dropped on a watch event while another file defines the pod: it
		// is back at the relist.
		if w := relistWinner(c.snap.Files, key); w != nil {
			effect = fmt.Sprintf("the kubelet stops it, and its next relist starts it again from %s", w.Name)
			glance = fmt.Sprintf("the kubelet stops the pod, and its next relist starts it again from %s", w.Name)
			if young {
				glance = fmt.Sprintf("the kubelet stops the pod if its watch read that name first, and its next relist starts it again from %s", w.Name)
			}
		}
	}
	if glance == "" {
		glance = strings.Replace(effect, "the kubelet stops it", "the kubelet stops the pod", 1)
	}
	// A pod a deleted name took with it is gone at once, not the end of
	// an editor's save: the kubelet stops it on the event.
	if (!dropped || by == p.File || unsure) && !c.settled("pod/"+key, since) {
		if dropped {
			c.kv.wait(key, by, young)
		}
		return
	}
	delete(c.kv.waiting, key)
	c.ownPods()
	delete(c.next.Pods, key)
	id := c.emit(types.Change{
		Op: types.OpRemove, Type: typ, Reason: types.ReasonRemoved, Object: podObject(key), File: file, At: since, MaySkip: maySkip,
		ID:      changeID(key, types.OpRemove, nil),
		Key:     transition(types.ReasonRemoved, file, p.identity(), ""),
		Message: c.glanced(head, glance, "", hedges...),
		Detail:  fmt.Sprintf("static pod %s removed: %s; %s", key, why, c.watchless(effect)),
	})
	if maySkip {
		c.racedRemoved(key, id)
	}
}

// onTheWay says which files the watch events gave key's pod before the one
// it ends with, since its last message (see kubeletView.passed), and the
// drops before them (droppedOnWay): each a restart the kubelet's sync loop
// may be told of; "" for none. It counts the reads of a part of a file
// written in pieces (partial, see midway.go). It names too the files
// the kubelet may have read on the way, a race podwatch cannot see: those
// the view owes key (an unread file renamed onto its file), and the file
// the store gave key when a step began, gone from it since, when no
// message said the pod ran from it (published, its file; except, one the
// message names already).
func (c *computation) onTheWay(key, published, except string) string {
	mid := c.kv.passed[key]
	drops := c.kv.droppedOnWay[key]
	part := c.kv.partial[key]
	var may []string
	for _, name := range c.kv.owed[key] {
		if name != except && !slices.Contains(mid, name) {
			may = append(may, name)
		}
	}
	for _, from := range c.kv.from[key] {
		if from != published && from != except && !slices.Contains(mid, from) && !slices.Contains(may, from) {
			may = append(may, from)
		}
	}
	back := c.owedReturnBefore(key)
	if len(mid)+len(may)+part.n == 0 && back == "" {
		return ""
	}
	var took []string
	if len(drops) > 0 && len(mid) > 0 {
		took = append(took, "dropped the pod as "+strings.Join(drops, ", then ")+" went")
	} else {
		drops = nil
	}
	if len(mid) > 0 {
		took = append(took, "took in "+strings.Join(mid, ", then "))
	}
	if len(may) > 0 {
		took = append(took, "may have taken in "+strings.Join(may, ", then ")+" (gone again at once: whether it read it first is a race)")
	}
	if part.n > 0 {
		read := "may have read " + part.name + " mid-write"
		if part.n > 1 {
			read += fmt.Sprintf(" (%d times)", part.n)
		}
		took = append(took, read)
	}
	n := len(drops) + len(mid) + len(may) + part.n
	var way []string
	if len(took) > 0 {
		way = append(way, "the kubelet's watch "+strings.Join(took, " and "))
	}
	if back != "" {
		n++
		way = append(way, fmt.Sprintf("a relist of the kubelet's podwatch has not seen yet may have run it from %s again first (the second restart said before)", back))
	}
	c.cl.way = n
	c.noteVia(drops...)
	c.noteVia(mid...)
	c.noteVia(may...)
	c.noteVia(part.name, back)
	return fmt.Sprintf("on the way %s, so it may restart the pod %s before this", strings.Join(way, ", and "), times(n))
}

// young says whether name, gone in this step, was created on the watch
// less than the settle delay before: whether the kubelet read it is a
// race.
func (c *computation) young(name string) bool {
	at, ok := c.kv.goneBorn[name]
	if !ok {
		return false
	}
	return c.snapTime().Before(at.Add(c.opts.SettleDelay))
}

// snapTime is when the snapshot was taken; now for one built without.
func (c *computation) snapTime() time.Time {
	if c.snap.Time.IsZero() {
		return c.now
	}
	return c.snap.Time
}

// settleOwed forgets what the view owes a key no change waits for: the
// change it would have gone with went out, or nothing changed.
func (c *computation) settleOwed() {
	p := c.next.Pending
	unpending(c.kv.owed, p)
	unpending(c.kv.partial, p)
	unpending(c.kv.fixed, p)
	unpending(c.kv.bounced, p)
	unpending(c.kv.mayDrop, p)
	unpending(c.kv.replayDrop, p)
	unpending(c.kv.passed, p)
	unpending(c.kv.droppedOnWay, p)
	unpending(c.kv.waiting, p)
	unpending(c.kv.from, p)
}

// unpending deletes from m, keyed by pod, each pod no change waits for.
func unpending[V any](m map[string]V, pending map[string]time.Time) {
	for key := range m {
		if _, ok := pending["pod/"+key]; !ok {
			delete(m, key)
		}
	}
}

// times words n extra restarts.
func times(n int) string {
	if n == 1 {
		return "once more"
	}
	return fmt.Sprintf("%d more times", n)
}

// changeAt is when the change to f's pod happened: when its content was
// first seen; for a change of winning file a relist makes (the winner
// taken back after a shadowed file ran), the relist; for one a watch event
// makes, that event, which may be long after the content was first seen
// (a chmod of a shadowed file).
func (c *computation) changeAt(key string, f *types.File, fileChanged bool) time.Time {
	if !fileChanged {
		return f.ChangedAt
	}
	if !c.relisted {
		if r, ok := c.kv.ran[key]; ok && r.file == f.Name {
			return types.Later(f.ChangedAt, r.at)
		}
		return f.ChangedAt
	}
	at := c.snap.KubeletRelist
	if at.IsZero() {
		at = c.snap.Time
	}
	return types.Later(f.ChangedAt, at)
}

// watchless is effect, said at the kubelet's relist once its watch of the
// folder is gone (see kubeletView.watchGone), when it does not say when
// already.
func (c *computation) watchless(effect string) string {
	if !c.watchGone() || strings.Contains(effect, "relist") {
		return c.behind(effect)
	}
	return c.atRelist(effect) + " (its watch of the folder ended when the folder went away)"
}

// behind adds to what the kubelet does on its watch that its file source
// runs behind, when podwatch saw its relist come late lately (see
// behindFor; Snapshot.KubeletHeldUp): a file source held up by a
// busy sync loop takes in a change's watch events late, possibly seconds
// apart, and a relist between two of them is a restart more, and the
// event after it another, which no count of podwatch's own events bounds.
//
// A phase lost lately (Snapshot.KubeletRelistLost) counts the same, said as
// a may: the kubelet's relists stopped showing, as a held-up file source's
// slow reads do, and a kubelet that is down or reads another folder makes
// no restart at all. So do full reads less than a period apart while no
// phase is known (Snapshot.KubeletUneven): a held-up file source's, which
// keep the phase from being learnt, or another reader's.
func (c *computation) behind(effect string) string {
	if strings.Contains(effect, "relist") {
		return effect
	}
	span := behindSpan(c.opts.RelistPeriod)
	for _, s := range c.lateSigns() {
		if !s.at.IsZero() && c.snapTime().Sub(s.at) <= span {
			runs := "runs"
			if s.may() {
				runs = "may run"
			}
			c.cl.behind = true
			return effect + fmt.Sprintf("; the kubelet's file source %s behind (%s), so it may take in this change's events seconds apart with a relist between, and restart the pod more times on the way", runs, s.says())
		}
	}
	c.bounded = true
	return effect
}

// lateSign is a sign that the kubelet's file source runs behind, seen at
// at: a relist seen late, the phase lost, or full reads less than a period
// apart; the last two may also be another reader's doing.
type lateSign struct {
	at   time.Time
	kind lateKind
}

type lateKind int

const (
	heldUpSign lateKind = iota
	lostSign
	unevenSign
)

// lateSigns are the signs the snapshot carries, the surest first.
func (c *computation) lateSigns() [3]lateSign {
	return [...]lateSign{{c.snap.KubeletHeldUp, heldUpSign}, {c.snap.KubeletRelistLost, lostSign}, {c.snap.KubeletUneven, unevenSign}}
}

// may says the sign may also be another reader's doing, or a kubelet down.
func (s lateSign) may() bool { return s.kind != heldUpSign }

// says is what the sign is, for a message.
func (s lateSign) says() string {
	at := s.at.UTC().Format(time.RFC3339Nano)
	switch s.kind {
	case heldUpSign:
		return fmt.Sprintf("its relist at %s came late, held up by a busy sync loop", at)
	case lostSign:
		return fmt.Sprintf("podwatch lost sight of its relist at %s, as when a busy sync loop holds it up", at)
	}
	return fmt.Sprintf("a full read of the folder at %s came less than a relist period after the one before, as a held-up relist does, or another reader's", at)
}

// short is what the sign is, in a few words.
func (s lateSign) short() string {
	switch s.kind {
	case heldUpSign:
		return "its relist came late"
	case lostSign:
		return "podwatch lost sight of its relist"
	}
	return "a full read of the folder came early"
}

// behindSpan is how long before and after a sign of it the kubelet's
// file source is taken to run behind (see behindPeriods).
func behindSpan(period time.Duration) time.Duration {
	return max(behindPeriods*period, behindFor)
}

// behindPeriods relist periods after a relist seen late, and behindFor
// at least, the kubelet's file source is taken to run behind: a load that
// holds up its sync loop lasts longer than the few seconds of a short
// period, and its relists come late only now and then (a Go ticker keeps
// its beat).
const (
	behindPeriods = 3
	behindFor     = time.Minute
)

// atRelist says that what the kubelet does, it does at its relist, and
// whether podwatch saw that relist or stands in for it with its own.
func (c *computation) atRelist(what string) string {
	return c.atRelistThen(what, "")
}

// atRelistThen is atRelist with then, what follows, said before the
// estimate's caveat, which closes the sentence.
func (c *computation) atRelistThen(what, then string) string {
	c.cl.relist = true
	if !c.estimated {
		return what + " at its relist" + then
	}
	return what + " at its next relist" + c.within() + then + "; podwatch did not see that relist: its time is an estimate"
}

// within bounds the wait for the kubelet's next relist, for messages.
func (c *computation) within() string {
	if c.opts.RelistPeriod <= 0 {
		return ""
	}
	return " (within " + c.opts.RelistPeriod.String() + ")"
}

// revive publishes again a pod the kubelet let go and takes back from its
// last good parse (see kubeletView: an empty relist keeps the store).
func (c *computation) revive(key string, p PodState) {
	c.ownPods()
	c.next.Pods[key] = &p
	delete(c.kv.held, key)
	c.claimFresh()
	msg := fmt.Sprintf("static pod %s added again from its last good parse of %s: the kubelet's relist that found no valid manifest kept it, and a change to a valid one brings it back; the kubelet starts it", key, p.File)
	short := fmt.Sprintf("%s, its last good parse: the kubelet starts the pod again, as a change to a valid manifest follows its empty relist", p.File)
	b, bounced := c.kv.bounced[key]
	skip := false
	if bounced {
		msg = fmt.Sprintf("static pod %s added again from its last good parse of %s: %s; the kubelet starts it once it has stopped it (at its next housekeeping), unless its next relist drops it first", key, p.File, b.started())
		short = fmt.Sprintf("%s, its last good parse: the kubelet starts the pod again once it has stopped it; its next relist may drop it first", p.File)
		if b.may {
			short += "; if that relist read a whole valid write, the kubelet may skip this restart"
		}
		skip, c.cl.with = b.may, b.removeID
	} else if s := c.racedStart(key, p.File); s != "" {
		msg, bounced = fmt.Sprintf("static pod %s added again from its last good parse of %s: %s", key, p.File, s), true
		short = fmt.Sprintf("%s, its last good parse: the kubelet starts the pod again if its relist dropped it; if it never stopped the pod, the kubelet may skip this restart", p.File)
		skip, c.cl.with = true, c.kv.raced[key].removeID
	}
	c.cl.skip = &skip
	c.emit(types.Change{
		Op: types.OpAdd, Type: v1.EventTypeWarning, Reason: types.ReasonAdded, Object: podObject(key), File: p.File, Hash: p.Hash, MaySkip: bounced,
		ID:      changeID(key, types.OpAdd, &types.File{Name: p.File, Pod: &types.Pod{Hash: p.Hash, Config: p.Config, UID: p.UID}}),
		Key:     transition(types.ReasonAdded, p.File, "", p.identity()),
		Message: short,
		Detail:  msg,
	})
}

func (c *computation) watchProblem() {
	w := c.snap.Watch
	if w.Up || w.Err == nil {
		return
	}
	msg := fmt.Sprintf("cannot watch %s: %v; changes are seen at the next relist (every %s) while podwatch retries the watch",
		c.opts.Path, w.Err, c.opts.RelistPeriod)
	if errors.Is(w.Err, fs.ErrNotExist) {
		// Neither the kubelet nor podwatch waits for a relist here: both
		// try a missing path's watch again on a short period.
		msg = fmt.Sprintf("cannot watch %s: it does not exist; like the kubelet, podwatch tries again every %s, so what is created there is taken in within about %s",
			c.opts.Path, types.MissingPathRetry, types.MissingPathRetry)
	}
	c.problem("watch", time.Time{}, true, types.Change{
		Type: v1.EventTypeWarning, Reason: types.ReasonWatchDegraded, Object: c.node(), Key: problemKey("watch", fault(w.Err)), Message: msg,
	})
}

// fresh reports whether a valid file's content may be published now: at
// once when the file is complete, otherwise once it was quiet for the
// settle delay.
func (c *computation) fresh(id string, f *types.File) bool {
	if f.Complete {
		return true
	}
	c.liveEnough(id)
	return c.due(f.ChangedAt.Add(c.opts.SettleDelay))
}

// settled reports whether bad news under id has persisted for the settle
// delay, counting from since (the last change of a file involved) or, when
// no file tells (a file gone, the folder gone), from when it was first seen.
func (c *computation) settled(id string, since time.Time) bool {
	first := c.liveEnough(id)
	if since.IsZero() {
		since = first
	}
	return c.due(since.Add(c.opts.SettleDelay))
}

func (c *computation) liveEnough(id string) time.Time {
	c.livePending[id] = true
	first, ok := c.next.Pending[id]
	if !ok {
		first = c.now
		c.next.Pending[id] = first
	}
	return first
}

func (c *computation) due(at time.Time) bool {
	if !c.now.Before(at) {
		return true
	}
	if c.recheck.IsZero() || at.Before(c.recheck) {
		c.recheck = at
	}
	return false
}

// problem reports a persisting problem: once when it settles, and again at
// every relist (each relist is one occurrence for the kubelet), unless once.
func (c *computation) problem(id string, since time.Time, once bool, ch types.Change) {
	c.liveProblem[id] = true
	if !c.settled("problem/"+id, since) {
		return
	}
	// A rewrite that keeps the same problem is a new occurrence too.
	fp := ch.Message
	if !since.IsZero() {
		fp += "\x00" + since.UTC().Format(time.RFC3339Nano)
	}
	if last, ok := c.next.Reported[id]; ok && last == fp && (once || !c.snap.Relist || c.snap.Extra) {
		return
	}
	c.next.Reported[id] = fp
	c.emit(ch)
}

// reportedSince is when the problem id last reported began (the change
// of its file), as its fingerprint in Reported keeps it; false when it
// was not reported, or with no such time.
func (c *computation) reportedSince(id string) (time.Time, bool) {
	fp, ok := c.next.Reported[id]
	i := strings.LastIndexByte(fp, 0)
	if !ok || i < 0 {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, fp[i+1:])
	return at, err == nil
}

func (c *computation) emit(ch types.Change) uint64 {
	if ch.Op != "" && ch.Claim == nil {
		ch.Claim = c.claimOf(ch.Op, ch.MaySkip)
	}
	if ch.Op != "" {
		key := ch.Object.Namespace + "/" + ch.Object.Name
		c.noteSaid(key, c.bounded, ch.Claim.ID)
		delete(c.next.Pending, "pod/"+key)
		delete(c.livePending, "pod/"+key)
		delete(c.kv.owed, key)
		delete(c.kv.partial, key)
		delete(c.kv.mayDrop, key)
		delete(c.kv.replayDrop, key)
		delete(c.kv.passed, key)
		delete(c.kv.droppedOnWay, key)
		delete(c.kv.from, key)
		delete(c.kv.returnOwed, key)
	}
	c.bounded = false
	c.cl = claimParts{}
	ch.Message = hedged(ch.Message, ch.Claim)
	c.changes = append(c.changes, ch)
	if ch.Claim == nil {
		return 0
	}
	return ch.Claim.ID
}

func podObject(key string) types.Object {
	ns, name, _ := strings.Cut(key, "/")
	return types.Object{Kind: types.KindPod, Namespace: ns, Name: name}
}

func images(f *types.File) string {
	return "containers: " + strings.Join(f.Pod.Containers, ", ")
}

func published(f *types.File) *PodState {
	return &PodState{File: f.Name, Hash: f.Pod.Hash, Config: f.Pod.Config, UID: f.Pod.UID, JSON: f.Pod.JSON, Spelt: f.Pod.Spelt}
}

// errNoCopy says the published pod's JSON is gone (its salt was lost with
// the state on disk), so the fields that changed cannot be named.
var errNoCopy = errors.New("podwatch has no saved copy of the previous version to compare")

// describe lists the fields that differ between the published pod and the
// new one; only an UPDATE pays for decoding both. A pod restored from disk
// holds digests where secrets were, so the new one is then scrubbed too:
// the fields they stand for are only ever named as changed.
func describe(p PodState, cur *types.Pod, salt []byte) ([]fieldChange, error) {
	if len(p.JSON) == 0 {
		return nil, errNoCopy // say less, but nothing false
	}
	old, err := p.object()
	if err != nil {
		return nil, err
	}
	now, err := cur.Object()
	if err != nil {
		return nil, err
	}
	if bytes.Contains(p.JSON, []byte(digestPrefix)) {
		scrubPod(now, salt) // old came from disk, scrubbed: compare like with like
	}
	return podFieldChanges(old, now, p.Spelt, cur.Spelt), nil
}

func ignoredMessage(f *types.File) string {
	parts := make([]string, 0, len(f.Pod.Ignored))
	for _, ig := range f.Pod.Ignored {
		if ig.Line > 0 {
			parts = append(parts, fmt.Sprintf("line %d: %s", ig.Line, ig.What))
		} else {
			parts = append(parts, ig.What)
		}
	}
	return fmt.Sprintf("%s: the kubelet silently ignores %s", f.Name, strings.Join(parts, "; "))
}

// respelt names the quantities written another way between two pods with
// the same fields, by path, as "path: old -> new" in path order. A path
// one side lacks was written canonically there, which the other side's
// text, parsed, gives.
func respelt(old, cur map[string]string) []string {
	var out []string
	paths := append(slices.Collect(maps.Keys(old)), slices.Collect(maps.Keys(cur))...)
	slices.Sort(paths)
	for _, path := range slices.Compact(paths) {
		a, b := old[path], cur[path]
		if a == b {
			continue
		}
		if a == "" {
			a = canonicalQuantity(b)
		}
		if b == "" {
			b = canonicalQuantity(a)
		}
		out = append(out, fmt.Sprintf("%s: %s -> %s", path, a, b))
	}
	return out
}

// canonicalQuantity is text's canonical form, as a file that wrote it so
// would have it; text itself when it does not parse.
func canonicalQuantity(text string) string {
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return text
	}
	return q.String()
}
