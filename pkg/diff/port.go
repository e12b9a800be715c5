package diff

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/types"
)

// portStep is a step of the diff: the pod changes as the port of the
// kubelet's file source decides them, replayed over the window of
// snapshots since its ways last met, and explored where podwatch cannot
// see; the problems, and their words, from the port's facts. A change is
// what podwatch's own view runs now against what was published; its claim
// is what the other ways allow.
func (c *computation) portStep(prev State, inPlace bool) ([]types.Change, State, time.Time) {
	ps := prev.port
	switch {
	case ps == nil:
		ps = newPortState()
	case !inPlace:
		ps = ps.clone()
	}
	c.next.port = ps
	unseen := false
	if c.snap.PathErr == nil || errors.Is(c.snap.PathErr, fs.ErrNotExist) {
		c.window, unseen = c.portTake(ps)
	}
	invalidFrom := pendingInvalid(c.next.Pending)
	names, incremental := c.incrementalPlan(prev.base)
	if incremental {
		// Only the named files can have a problem of their own new, and
		// none of them a second definer (see incremental.go).
		c.watchProblem()
		c.touchedProblems(names)
	} else {
		c.run()
	}
	first := len(c.changes)
	if c.window.ps != nil {
		w := portWindow{c: c, portView: c.window, unseen: unseen, invalidFrom: invalidFrom, inventory: prev.Inventory, oneDefiner: incremental}
		c.portChanges(&w)
		w.invalidDue()
	}
	c.amendIn(&ps.said, &ps.lateSeen)
	if incremental {
		c.sweep(touchedIDs(names))
	} else {
		c.sweepAll()
	}
	c.next.base = c.portBaseline(incremental, names, c.changes[first:])
	return c.changes, c.next, c.recheck
}

// portBaseline is the baseline for the next step when this one left the
// published pods plain (see incremental.go), nil otherwise. After an
// incremental step, whose names no published pod lost, the pods of those
// names and the changes said (each of one of them) tell; after a full
// step, every file.
func (c *computation) portBaseline(incremental bool, names []string, said []types.Change) *baseline {
	s := c.snap
	if s.Seq == 0 || s.PathErr != nil || s.Single || !c.recheck.IsZero() || c.keptInvalid {
		return nil
	}
	for id := range c.next.Pending {
		if strings.HasPrefix(id, "pod/") {
			return nil
		}
	}
	if !incremental {
		if !c.podsPlain() {
			return nil
		}
		return &baseline{seq: s.Seq, files: s.Files, now: c.now, opts: c.opts.comparable()}
	}
	keys := map[string]bool{}
	for _, name := range names {
		f := lookup(s.Files, name)
		if f == nil || !validPod(f) {
			continue
		}
		keys[f.Pod.Key] = true
		if p := c.next.Pods[f.Pod.Key]; p == nil || p.File != name || p.Hash != f.Pod.Hash || p.Config != f.Pod.Config {
			return nil
		}
	}
	for _, ch := range said {
		if ch.Op != "" && !keys[ch.Object.Namespace+"/"+ch.Object.Name] {
			return nil // the port changed a pod no named file gives
		}
	}
	return &baseline{seq: s.Seq, files: s.Files, now: c.now, opts: c.opts.comparable()}
}

// portTake takes the snapshot into the window and explores it. unseen:
// the window's last relist is one podwatch did not see, but knows came.
func (c *computation) portTake(ps *portState) (view portView, unseen bool) {
	snap := ps.withEvents(c.snap)
	before := relistsOf(ps.tl.Inputs())
	switch ps.handed(snap) {
	case handedNew:
		if !ps.tl.Started() && snap.PathErr == nil {
			ps.started = snap.Files
		}
		unseen = ps.unseenRelist(&snap, c.snapTime(), c.opts.RelistPeriod)
		ps.note(snap)
		if unseen {
			ps.tl.AddUnseen(snap)
		} else {
			ps.tl.Add(snap)
		}
	case handedRelist:
		// The same snapshot, handed again with the relist the agent took
		// in late: its events are in, and the relist goes where it fell.
		ps.tl.Again(snap)
	}
	placed := placedRelist(before, ps.tl.Inputs())
	ps.settleStart(snap, c.now, c.opts.SettleDelay)
	inputs := ps.tl.Inputs()
	e := model.ExploreTouched(ps.base, inputs, portCap)
	return portView{ps: ps, e: e, inputs: inputs, placed: placed}, unseen
}

// portChanges says each pod whose run in the window differs from what was
// published, once it may be said, and folds the window when its ways meet.
func (c *computation) portChanges(w *portWindow) {
	ps, e, inputs := w.ps, w.e, w.inputs
	keys := map[string]bool{}
	for _, part := range e.Parts {
		for _, key := range part.Keys {
			if !strings.HasPrefix(key, "\x00") {
				keys[key] = true
			}
		}
	}
	for id := range c.next.Pending {
		// A change that waits is looked at again, though the window that
		// made it may have been folded since.
		if key, ok := strings.CutPrefix(id, "pod/"); ok {
			keys[key] = true
		}
	}
	if slices.ContainsFunc(inputs, func(in model.Input) bool { return in.Relist != nil }) {
		for key := range c.next.Pods {
			keys[key] = true
		}
	}
	first := len(c.changes)
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		w.change(key)
	}
	sortByPod(c.changes[first:])
	if len(inputs) > portWindowMax {
		// A busy folder, where some way always differs or some change
		// always waits: podwatch's own view stands for the others from
		// here, so that a step costs what the window holds, not what
		// the folder went through. The keys the dropped ways held
		// otherwise are marked, and their next claims widened. The
		// events a relist of the kubelet's still to be taken in may
		// have come before stay (portHeld).
		if n := c.portHeld(ps); n < len(inputs) {
			if n > 0 {
				ps.foldForcedTo(model.ExploreTouched(ps.base, inputs[:n], portCap), n)
			}
			return
		}
		ps.foldForced(e)
		return
	}
	for id := range c.next.Pending {
		if strings.HasPrefix(id, "pod/") {
			return // a change waits: the window holds what it will say
		}
	}
	if e.Agreed() && !c.portHolds(ps) && !ps.tl.Unsettled() && !w.awaitsTakeBack() {
		ps.fold(e)
	}
}

// portWindowMax bounds the inputs a window holds before it is folded
// whatever its ways say.
const portWindowMax = 8

// portWindow is one step's exploration of the window.
type portWindow struct {
	c *computation
	portView
	// states are the own view after each input, from the state from,
	// as far as the inputs touch it; nil until asked for.
	from   *model.Kubelet
	states []*model.Kubelet
	// unseen: that relist is one podwatch did not see, but knows came.
	unseen bool
	// invalidFrom are the invalid files waiting to be reported before
	// the step, by problem ID: since when (pendingInvalid).
	invalidFrom map[string]time.Time
	// inventory: nothing was published before, so pods are found, not
	// added (State.Inventory).
	inventory bool
	// oneDefiner: no two valid files define one key, as an incremental
	// step knows without a look at the folder (see incremental.go).
	oneDefiner bool
}

// own is what podwatch's own view runs for key at the end of the window,
// and the pod.
func (w *portWindow) own(key string) (string, model.Pod, bool) {
	part := w.e.Part(key)
	if part == nil {
		p, ok := w.ps.base.Pod(key)
		return p.Identity(), p, ok
	}
	end := part.Ends[0]
	p, ok := end.Kubelet.Pod(key)
	if !ok {
		return "", p, false
	}
	return p.Identity(), p, true
}

func (w *portWindow) change(key string) {
	c := w.c
	id, pod, runs := w.own(key)
	pub, had := c.next.Pods[key]
	said := ""
	if had {
		said = portIdentity(c.snap, key, pub)
	}
	if had && pub.Config == "" && runs {
		if f := w.ps.fileFor(c.snap, pod); f != nil && f.Name == pub.File && f.Pod.Hash == pub.Hash {
			c.ownPods() // a state from before Config: keep it from now on
			c.next.Pods[key] = published(f)
			return
		}
	}
	if had && w.keeps(*pub) {
		return
	}
	switch {
	case !runs && !had:
		return
	case !runs:
		w.remove(key, *pub, said, false)
	case id == said && w.bounce(key, *pub, said):
	case id == said && w.shortFix(key, *pub):
	case id == said && w.excursion(key, *pub, said):
	case id == said && w.dropWaits(key):
		// The drop waited the settle delay, and the kubelet ran the
		// same pod again before it was said: it stopped and started it.
		w.remove(key, *pub, said, true)
		if f := w.ps.fileFor(c.snap, pod); f != nil {
			w.add(key, f, id)
		}
	case id == said:
		if f := w.ps.fileFor(c.snap, pod); f != nil && pub.File != f.Name {
			c.ownPods() // metadata.uid pins the pod: the kubelet changes nothing
			c.next.Pods[key] = published(f)
		}
	default:
		f := w.ps.fileFor(c.snap, pod)
		if f == nil {
			f = &types.File{Name: pathBase(pod.File), Pod: &types.Pod{Key: key, Config: pod.Semantic}, Complete: true}
		}
		if !had {
			w.add(key, f, id)
			return
		}
		w.update(key, *pub, f, said, id, false)
	}
}

// portView is the window after the step's snapshot, as the problems ask
// it too: the computation keeps it by value, with no way back to itself,
// so that a step's computation stays off the heap.
type portView struct {
	ps     *portState
	e      *model.Explored
	inputs []model.Input
	// placed is the index in inputs of the kubelet's relist this step
	// placed, -1 for none (portrelist.go).
	placed int
}

// ownKubelet is the own view's kubelet at the end of the window as it
// holds key: the first end of key's part, or the base for a key no input
// touched.
func (w *portView) ownKubelet(key string) *model.Kubelet {
	if part := w.e.Part(key); part != nil {
		return part.Ends[0].Kubelet
	}
	return w.ps.base
}

// runsFrom says the own view at the end of the window runs, from the file
// at path, the pod its last good parse gave: the kubelet's fileKeyMapping
// names the pod's key for path, its store holds that key's pod from path,
// and its merge runs it. It names the key.
func (w *portView) runsFrom(path string) (string, bool) {
	var key string
	var ok bool
	for _, part := range w.e.Parts {
		if key, ok = part.Ends[0].Kubelet.Source.KeyOf(path); ok {
			break
		}
	}
	if !ok {
		if w.touches(path) {
			return "", false // the window's inputs dropped its mapping
		}
		if key, ok = w.ps.base.Source.KeyOf(path); !ok {
			return "", false
		}
	}
	k := w.ownKubelet(key)
	p, stored := k.Source.Stored(key)
	return key, stored && p.File == path && k.Running(key) != ""
}

// touches says an input of the window names path, or lists the folder.
func (w *portView) touches(path string) bool {
	return slices.ContainsFunc(w.inputs, func(in model.Input) bool {
		return in.Relist != nil || (in.Event != nil && in.Event.Path == path)
	})
}

// invalidSince is when name turned invalid, as the problem reported of
// it says, while podwatch knows no relist of the kubelet's: then whether
// one fell within the span is a race.
func (w *portWindow) invalidSince(name string) (time.Time, bool) {
	c := w.c
	if c.snap.Single || c.opts.RelistPeriod <= 0 || !c.snap.KubeletRelist.IsZero() || !w.ps.tl.Relisted().IsZero() {
		return time.Time{}, false
	}
	return c.reportedSince("invalid/" + name)
}

// invalidDue asks for a recheck a relist period after a published pod's
// file turned invalid, while podwatch knows no relist of the kubelet's:
// the watch ignores the file and keeps the pod, and by then a relist of
// the kubelet's fell within the span and stopped it (see remove).
func (w *portWindow) invalidDue() {
	c := w.c
	if !c.keptInvalid {
		return // no file's problem said the kubelet keeps its pod
	}
	for _, p := range c.next.Pods {
		if f := c.file(p.File); f == nil || f.Err == nil {
			continue
		}
		if from, ok := w.invalidSince(p.File); ok {
			c.due(from.Add(c.opts.RelistPeriod))
		}
	}
}

// shortSpan is pub's file fixed now after less than a relist period
// invalid, while podwatch knows no relist of the kubelet's; ok false for
// none. A span shorter than the settle delay is an editor's save.
func (w *portWindow) shortSpan(pub PodState) (fixedSpan, *types.File, bool) {
	c := w.c
	from, ok := w.invalidSince(pub.File)
	f := c.file(pub.File)
	var fx fixedSpan
	if !ok && f != nil && validPod(f) && !c.snap.Single && c.opts.RelistPeriod > 0 {
		// The phase known, a relist held up may have read the folder
		// within the span, off its grid (see fixedSpan).
		if from, ok = c.reportedSince("invalid/" + pub.File); !ok {
			from, ok = w.invalidFrom["invalid/"+pub.File]
		}
		if ok {
			if fx.heldUp, fx.behind = lateNear(c.snap, c.opts.RelistPeriod, from, f.ChangedAt); fx.heldUp.IsZero() {
				ok = false
			}
		}
	}
	if !ok || f == nil || !validPod(f) {
		return fixedSpan{}, nil, false
	}
	span := f.ChangedAt.Sub(from)
	fx.file, fx.from, fx.to = pub.File, from, f.ChangedAt
	return fx, f, span >= c.opts.SettleDelay && span < c.opts.RelistPeriod
}

// shortFix says, for key's pod back the same after a short invalid span,
// the REMOVE a relist of the kubelet's within the span may have made and
// the ADD at the fix that goes with it, each one the kubelet may skip;
// false when it is no such fix.
func (w *portWindow) shortFix(key string, pub PodState) bool {
	c := w.c
	fx, f, ok := w.shortSpan(pub)
	if !ok || f.Pod.Key != key || f.Pod.Config != pub.Config {
		return false
	}
	c.ownPods()
	delete(c.next.Pods, key)
	rm := &types.Claim{ID: c.nextClaimID(), Op: types.OpRemove, At: types.ClaimAtRelist, Before: types.Bounded(0, 0), MaySkip: true, Estimate: true}
	folded := w.ps.claimFolded(key, "", w.e.Part(key) != nil, rm)
	c.portEmit(c.spanRemove(key, fx, pub.identity()), rm)
	c.next.Pods[key] = published(f)
	effect := fmt.Sprintf("the kubelet starts it again if a relist of its stopped it while %s was invalid; if not, the pod ran on, and the kubelet may skip this restart", f.Name)
	add := &types.Claim{ID: c.nextClaimID(), Op: types.OpAdd, At: types.ClaimAtWatch, Before: types.Bounded(0, 0), MaySkip: true, With: rm.ID}
	if folded {
		add.Before, add.Folded = types.Range{Min: 0}, true // all or nothing with rm
	}
	c.portEmit(addChange(key, f, v1.EventTypeNormal, c.startMessage(f, effect, true),
		fmt.Sprintf("%s: static pod %s added (%s); %s", f.Name, key, images(f), effect), true), add)
	return true
}

// dropWaits says a REMOVE of key waits to settle while the own view,
// which dropped the pod within the window, runs it again.
func (w *portWindow) dropWaits(key string) bool {
	if _, waits := w.c.next.Pending["pod/"+key]; !waits {
		return false
	}
	return w.madeBy(key, "") >= 0
}

// keeps says the kubelet runs on what was published of a pod, whatever
// podwatch's read of its file says: a file podwatch cannot read, which
// the kubelet can; and, for a single file, one that does not decode,
// as the kubelet's listConfig of a file that fails replaces nothing.
func (w *portWindow) keeps(pub PodState) bool {
	c := w.c
	if c.snap.PathErr != nil {
		return false
	}
	f := c.file(pub.File)
	return f != nil && (f.ReadErr != nil || (c.snap.Single && f.Err != nil))
}

func pathBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// claim is what the window's ways say of key's change from said (what
// was published) to to, what the own view runs.
func (w *portWindow) claim(key string, op types.Op, said, to string) *types.Claim {
	c := w.c
	cl := &types.Claim{ID: c.nextClaimID(), Op: op, At: types.ClaimAtWatch, Before: types.Bounded(0, 0)}
	part := w.e.Part(key)
	if part != nil {
		var elsewhere int
		cl.Before, cl.MaySkip, elsewhere = portSpan(part, key, said, to)
		if elsewhere > 0 {
			cl.After.Max = 1
		}
		if part.Capped {
			cl.Before, cl.Capped = types.Range{Min: 0}, true
		}
	}
	w.ps.claimFolded(key, to, part != nil, cl)
	if cl.Before.Max == nil || *cl.Before.Max > 0 {
		cl.Via = w.via(key, said, to)
	}
	if cl.Before.Max != nil && w.returnDue(key) {
		m := *cl.Before.Max + 1
		cl.Before.Max = &m
	}
	if at, late := w.atRelist(key, to); at {
		cl.At = types.ClaimAtRelist
		cl.Estimate = c.snap.KubeletRelist.IsZero() || w.unseen || late || c.snap.PathErr != nil
	}
	if _, near := c.nearSign(); cl.At == types.ClaimAtWatch && near {
		// A relist's change is made at once: no late event adds to it.
		cl.Before.Max = nil
	}
	return cl
}

// atRelist says the own view made key's change to to at a relist of the
// window: the last input that turned key's run to to was one. late: that
// relist is not the window's last input, so the change is said after
// it. Once the kubelet's watch ended with the folder, only its relists
// change anything, whichever input podwatch's window still holds.
func (w *portWindow) atRelist(key, to string) (at, late bool) {
	if !w.ps.tl.Unwatched() && !slices.ContainsFunc(w.inputs, func(in model.Input) bool { return in.Relist != nil }) {
		return false, false // no relist in the window, and the watch takes the rest in
	}
	if i := w.madeBy(key, to); i >= 0 {
		c := w.c
		if i == 0 && !c.snap.Relist && c.next.Pods[key] != nil && w.ps.base.Running(key) == "" {
			// The list a new port state begins with stands for the
			// kubelet's state of a published pod, not a relist: a
			// change to it came on the watch.
			return false, false
		}
		// Said after a later relist than the one that made it (the
		// window's last relist, whose time the snapshot gives), wherever
		// that one fell among the window's events.
		return w.inputs[i].Relist != nil, slices.ContainsFunc(w.inputs[i+1:], func(in model.Input) bool { return in.Relist != nil })
	}
	return w.ps.tl.Unwatched(), true
}

// madeBy is the index of the last input of the window that turned key's
// run, in the own view, to to; -1 for none.
func (w *portWindow) madeBy(key, to string) int {
	w.replayed()
	for i := len(w.inputs) - 1; i >= 0; i-- {
		before := w.before(i)
		if w.states[i].Running(key) == to && before.Running(key) != to {
			return i
		}
	}
	return -1
}

// emptyRelist says a relist that listed no valid pod, as the own view
// read the folder, dropped key's pod.
func (w *portWindow) emptyRelist(key string) bool {
	i := w.madeBy(key, "")
	return i >= 0 && w.inputs[i].Relist != nil && emptyListing(w.inputs[i].Relist)
}

// via names, in the own view, the files key's pod ran from on the way
// from said to to and the names whose deletion dropped it on the way,
// since the window last ran said; then the files the other ways ran it
// from on the way (a temp file podwatch never read whole).
func (w *portWindow) via(key, said, to string) []string {
	names := w.ownVia(key, said, to)
	part := w.e.Part(key)
	if part == nil {
		return names
	}
	ran := map[string]bool{}
	for _, end := range part.Ends[1:] {
		for _, id := range end.Runs[key] {
			if id != "" && id != said && id != to {
				ran[id] = true
			}
		}
	}
	if len(ran) == 0 {
		return names
	}
	// A version of the file the change is from is no file on the way.
	_, own, _ := w.own(key)
	note := func(o model.Outcome) {
		if o.Pod != nil && ran[o.Pod.Identity()] && o.Pod.File != own.File && !slices.Contains(names, pathBase(o.Pod.File)) {
			names = append(names, pathBase(o.Pod.File))
		}
	}
	for _, in := range w.inputs {
		for _, o := range in.Reads {
			note(o)
		}
		if in.Relist != nil {
			for _, l := range in.Relist.Files {
				for _, o := range l.Reads {
					note(o)
				}
			}
		}
	}
	return names
}

// ownVia is via in the own view alone.
func (w *portWindow) ownVia(key, said, to string) []string {
	w.replayed()
	from := 0
	for i, st := range w.states {
		if st.Running(key) == said {
			from = i + 1
		}
	}
	var names []string
	note := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for i := from; i < len(w.states); i++ {
		before := w.before(i)
		run := w.states[i].Running(key)
		if run == before.Running(key) || (run == to && i == w.madeBy(key, to)) {
			continue
		}
		if p, ok := w.states[i].Pod(key); ok {
			note(pathBase(p.File))
		} else if e := w.inputs[i].Event; e != nil && e.Type == model.PodDelete {
			note(pathBase(e.Path))
		}
	}
	return names
}

// excursion says, for key's change that waits while the own view ran
// another pod within the window and is back to what was published (a
// new file held, which a relist took the winner back from), both
// restarts: to the other pod, and back; false when there was none.
func (w *portWindow) excursion(key string, pub PodState, said string) bool {
	c := w.c
	if _, waits := c.next.Pending["pod/"+key]; !waits {
		return false
	}
	w.replayed()
	var away model.Pod
	found := false
	for _, st := range w.states {
		if p, ok := st.Pod(key); ok && p.Identity() != said {
			away, found = p, true
		}
	}
	if !found {
		return false
	}
	f, back := w.ps.fileFor(c.snap, away), c.file(pub.File)
	if f == nil || back == nil || !validPod(back) || back.Pod.Key != key {
		return false
	}
	w.update(key, pub, f, said, away.Identity(), true)
	w.update(key, *c.next.Pods[key], back, away.Identity(), said, true)
	return true
}

// born says f is a file the kubelet's file source had never read at the
// window's start: new since.
func (w *portWindow) born(f *types.File) bool {
	_, known := w.ps.base.Source.KeyOf(model.PathOf(w.c.snap, f.Name))
	return !known
}

// returnDue says a relist of the kubelet's may have come among the
// window's events unseen (its phase unknown, or one due on it and not yet
// taken in), while at the window's start it ran key's pod from a file its
// relist does not run it from (a shadowed file the watch took in): that
// relist may have run the pod from the winner again first, a restart
// more on the way.
func (w *portWindow) returnDue(key string) bool {
	c := w.c
	last := w.ps.tl.Relisted()
	if w.unseen || c.opts.RelistPeriod <= 0 || (!last.IsZero() && c.snapTime().Before(last.Add(c.opts.RelistPeriod))) {
		return false
	}
	w.replayed()
	p, ok := w.from.Pod(key)
	if !ok {
		return false
	}
	// Shadowed then: a name after it in byte order, still in the folder,
	// had given the key before the window, as the file source's mapping
	// keeps it.
	name := pathBase(p.File)
	dir := p.File[:len(p.File)-len(name)]
	for _, path := range w.from.Source.PathsOf(key) {
		other := pathBase(path)
		if other > name && path[:len(path)-len(other)] == dir && lookup(c.snap.Files, other) != nil {
			return true
		}
	}
	return false
}

// droppedBy is the name whose delete event dropped key's pod in the own
// view, "" when no delete did (a relist, or nothing in the window).
func (w *portWindow) droppedBy(key string) string {
	i := w.madeBy(key, "")
	if i < 0 || w.inputs[i].Event == nil || w.inputs[i].Event.Type != model.PodDelete {
		return ""
	}
	return pathBase(w.inputs[i].Event.Path)
}

// nearSign is the surest sign of a late file source near the snapshot:
// then no count of podwatch's own events bounds the restarts on the way.
func (c *computation) nearSign() (lateSign, bool) {
	for _, s := range c.lateSigns() {
		if !s.at.IsZero() && c.snapTime().Sub(s.at) <= behindSpan(c.opts.RelistPeriod) {
			return s, true
		}
	}
	return lateSign{}, false
}

// portSpan bounds, over the ends of key's part, the restarts on the way
// to to since said was published, the change itself not counted; says
// whether some end still runs said (made none of it); and counts the ends
// that run neither.
func portSpan(part *model.Part, key, said, to string) (types.Range, bool, int) {
	lo, hi, skip, elsewhere := -1, -1, false, 0
	for _, end := range part.Ends {
		r, ok := end.Runs[key]
		if !ok {
			r = []string{""}
		}
		if said == "" && !slices.Contains(r, "") {
			// An ADD where this way never stopped the pod (a REMOVE said
			// that the kubelet may have skipped): nothing to start.
			skip = true
			continue
		}
		if i := slices.Index(r, said); i >= 0 {
			r = r[i:]
		}
		last, reached := r[len(r)-1], len(r)
		switch {
		case said != to && last == said:
			skip = true
			continue
		case last != to:
			// Gone on past to (a backup's deletion dropped it after):
			// what follows is a stop and start after, and what came
			// before to's start was on the way all the same.
			elsewhere++
			j := slices.Index(r[1:], to)
			if to == "" || j < 0 {
				continue
			}
			reached = j + 2 // r[:reached] ends with to's start
		}
		n := restarts(r[:reached], said, to)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	if lo < 0 {
		return types.Bounded(0, 0), skip, elsewhere
	}
	return types.Bounded(lo, hi), skip, elsewhere
}

// restarts counts the pods a way r (from said, ending at to) started on
// its way to to, the change to to itself not counted.
func restarts(r []string, said, to string) int {
	n := 0
	for _, x := range r[1:] {
		if x != "" {
			n++
		}
	}
	if to != "" && said != to {
		n--
	}
	return max(n, 0)
}

func (w *portWindow) add(key string, f *types.File, to string) {
	c := w.c
	if !c.fresh("pod/"+key, f) {
		return
	}
	c.ownPods()
	c.next.Pods[key] = published(f)
	cl := w.claim(key, types.OpAdd, "", to)
	if w.inventory {
		c.portEmit(foundChange(key, f), cl)
		return
	}
	c.estimated = cl.Estimate
	typ := v1.EventTypeNormal
	msg := c.startMessage(f, plainStart, false)
	detail := fmt.Sprintf("%s: static pod %s added (%s); %s", f.Name, key, images(f), c.watchless(plainStart))
	if cur := c.file(f.Name); cur != f && cur != nil && cur.Err != nil {
		// The folder's file does not decode: the store's last good parse, which
		// a change to a valid manifest sent again after a relist found
		// none.
		typ = v1.EventTypeWarning
		msg = fmt.Sprintf("%s, its last good parse: the kubelet starts the pod again, as a change to a valid manifest follows its empty relist", f.Name)
		detail = fmt.Sprintf("static pod %s added again from its last good parse of %s: the kubelet's relist that found no valid manifest kept it, and a change to a valid one brings it back; the kubelet starts it", key, f.Name)
	}
	if cl.MaySkip && w.neverStopped(key) {
		detail += "; if the relist before never stopped the pod, the kubelet makes no start: it may skip this restart"
		// Skipped, the REMOVE said before was too: all or nothing.
		cl.With = w.ps.said[key].removed
	}
	c.portEmit(addChange(key, f, typ, msg, detail, cl.MaySkip), cl)
}

func (w *portWindow) update(key string, p PodState, f *types.File, said, to string, now bool) {
	c := w.c
	id := "pod/" + key
	content := p.Config != f.Pod.Config
	if !now && !content && !c.settled(id, f.ChangedAt) {
		return // only the file changed: an editor's backup, bad news
	}
	if !now && content && p.File != f.Name && !c.snap.Single && c.snap.Events != nil && w.born(f) && !c.settled(id, f.ChangedAt) {
		// A file the watch just made takes the pod: it may be a temp
		// file renamed over another a moment later, which the kubelet
		// may never have read. Held, the change from the rename's
		// target claims it on the way.
		return
	}
	fields, describeErr := describe(p, f.Pod, c.next.Salt)
	uidPinned := f.Pod.UID != "" && p.UID == f.Pod.UID
	c.ownPods()
	c.next.Pods[key] = published(f)
	if uidPinned && len(fields) == 0 && describeErr == nil {
		// The port's identity stands for the whole config; the kubelet
		// compares a pinned pod only by spec, labels and annotations.
		return
	}
	// Only a version the folder holds now can be shadowed in it.
	shadow := !w.oneDefiner && !c.snap.Single && c.file(f.Name) == f && shadowed(c.snap.Files, f)
	facts := updateFacts{fields: fields, describeErr: describeErr, content: p.Hash != f.Pod.Hash, restyled: p.Hash == f.Pod.Hash && content,
		respelt: respelt(p.Spelt, f.Pod.Spelt), uidPinned: uidPinned, shadow: shadow}
	parts := c.updateParts(p, f, fields, describeErr)
	if shadow {
		parts = append(parts, fmt.Sprintf("the kubelet took %s in on its watch and runs it until its next relist, which goes back to the last file in sort order that defines the pod (a second restart)", f.Name))
	}
	effect := "the kubelet gives the pod a new UID and restarts it"
	if uidPinned {
		effect = "metadata.uid is set, so the kubelet updates the pod in place"
	}
	cl := w.claim(key, types.OpUpdate, said, to)
	c.estimated = cl.Estimate
	if fx, _, ok := w.shortSpan(p); ok && fx.file == f.Name {
		parts = append(parts, fmt.Sprintf("the kubelet may stop the pod and start it again once (a race: %s; a relist within that span stopped the pod, and the fix starts it, in place of this update)", c.race(fx)))
		cl.After.Max = max(cl.After.Max, 1)
	}
	if !f.Complete {
		// Read while still open for writing, and said once quiet: the
		// kubelet may have read only the part, or only the whole, which
		// a window folded since no longer says.
		cl.MaySkip = true
	}
	var back types.TakeBack
	if cl.At == types.ClaimAtRelist && cl.Estimate && p.File != f.Name {
		back = w.takeBack(key, to)
	}
	c.portEmit(types.Change{
		Op: types.OpUpdate, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Object: podObject(key), File: f.Name, Hash: f.Pod.Hash,
		Pod: f.Pod, At: w.changeAt(key, to, p, f, cl), MaySkip: cl.MaySkip, Back: back,
		ID:      changeID(key, types.OpUpdate, f),
		Key:     transition(types.ReasonUpdated, f.Name, p.identity(), fileIdentity(f)),
		Message: c.updated(key, p, f, facts, nil),
		Detail:  fmt.Sprintf("%s: %s; %s", f.Name, strings.Join(parts, "; "), c.watchless(effect)),
	}, cl)
}

func (w *portWindow) remove(key string, p PodState, said string, now bool) {
	c := w.c
	var since time.Time
	typ := v1.EventTypeWarning
	file, head, glance, why := p.File, p.File+" was removed", "", ""
	by := w.droppedBy(key)
	f := c.file(p.File)
	switch {
	case c.snap.PathErr != nil:
		head = fmt.Sprintf("manifest path %s does not exist", c.opts.Path)
	case by != "" && by != p.File:
		// The kubelet drops the pod a deleted name last gave, though it
		// ran from another file.
		file, head = by, fmt.Sprintf("%s was removed (the pod ran from %s)", by, p.File)
	case f == nil:
		typ = v1.EventTypeNormal
	case f.Err != nil:
		head, since = fmt.Sprintf("%s is invalid (%s)", p.File, problem(f.Err)), f.ChangedAt
		why = fmt.Sprintf("%s is invalid: %v", p.File, f.Err)
	case f.Pod != nil && f.Pod.Key != key:
		typ, head, since = v1.EventTypeNormal, fmt.Sprintf("%s now defines pod %s", p.File, f.Pod.Key), f.ChangedAt
	case f.Pod != nil:
		head, since = p.File+" no longer gives the pod", f.ChangedAt
	default:
		head, since = p.File+" is no longer a regular file", f.ChangedAt
	}
	if by != "" {
		if wf := relistWinner(c.snap.Files, key); wf != nil {
			glance = "the kubelet stops the pod, and its next relist starts it again from " + wf.Name
		} else {
			typ = v1.EventTypeNormal
		}
	}
	full := false
	if from, ok := w.invalidSince(p.File); ok && f != nil && f.Err != nil && !now && by == "" && !w.emptyRelist(key) {
		// Not seen, the kubelet's relist may not have fallen within
		// the span: the drop waits for a full period of it, when one
		// did for sure, or for the fix, which says the race.
		first := c.liveEnough("pod/" + key)
		if !c.due(from.Add(c.opts.RelistPeriod)) {
			return
		}
		full, since = first.Before(c.now), from
	}
	// A name new in the window, gone again: the kubelet dropped the pod
	// only if it read the name first, a race; its REMOVE waits as well.
	_, known := w.ps.base.Source.KeyOf(model.PathOf(c.snap, by))
	if !now && !full && (by == "" || by == p.File || !known) && !c.settled("pod/"+key, since) {
		// Bad news waits the settle delay, as the problems do: an
		// editor's save puts the file back at once. A pod another
		// name's deletion took with it is gone at once.
		return
	}
	cl := w.claim(key, types.OpRemove, said, "")
	c.estimated = cl.Estimate
	then := ""
	if w.emptyRelist(key) {
		// The relist's list is empty: the kubelet's store keeps the
		// pod, and its next change to a valid manifest sends it again.
		head = "no valid manifest in " + c.opts.Path
		why = fmt.Sprintf("the kubelet's relist found no valid manifest in %s", c.opts.Path)
		if f != nil && f.Err != nil {
			head = fmt.Sprintf("%s is invalid (%s), and no other manifest is valid", p.File, problem(f.Err))
			why = fmt.Sprintf("%s is invalid: %v, and the kubelet's relist found no other valid manifest in %s", p.File, f.Err, c.opts.Path)
		}
		then = ", and starts it again from its last good parse at the next change to a valid manifest"
	}
	effect := "the kubelet stops it" + then
	if cl.At == types.ClaimAtRelist {
		effect = "the kubelet stops it at its relist" + then
		if cl.Estimate {
			effect = "the kubelet stops it at its next relist" + c.within() + then + "; podwatch did not see that relist: its time is an estimate"
		} else if e, g := w.racedDrop(p.File, cl); e != "" {
			effect, glance = e, g
		}
	}
	if full {
		cl.At, cl.Estimate = types.ClaimAtRelist, true
		head = fmt.Sprintf("%s invalid for %s (%s)", p.File, c.opts.RelistPeriod, problem(f.Err))
		effect = fmt.Sprintf("it has been for a full relist period (%s) since %s, so a relist of the kubelet's fell within that time, and stopped it; podwatch did not see that relist, so this time is an estimate",
			c.opts.RelistPeriod, since.UTC().Format(time.RFC3339Nano))
		glance = "the kubelet stopped the pod at a relist; its time is an estimate"
	}
	if why == "" {
		why = head
	}
	if glance == "" {
		glance = strings.Replace(effect, "the kubelet stops it", "the kubelet stops the pod", 1)
	}
	c.ownPods()
	delete(c.next.Pods, key)
	c.portEmit(types.Change{
		Op: types.OpRemove, Type: typ, Reason: types.ReasonRemoved, Object: podObject(key), File: file, At: since, MaySkip: cl.MaySkip,
		ID:      changeID(key, types.OpRemove, nil),
		Key:     transition(types.ReasonRemoved, file, p.identity(), ""),
		Message: c.glanced(head, glance, ""),
		Detail:  fmt.Sprintf("static pod %s removed: %s; %s", key, why, c.watchless(effect)),
	}, cl)
}

// changeAt is when the change from p to f happened: when f's content
// was first seen; for a change of file, which an event or a relist
// makes long after the content may have been written (a chmod of a
// shadowed file, the winner taken back), the relist the claim puts it
// at, or the snapshot that brought the event.
func (w *portWindow) changeAt(key, to string, p PodState, f *types.File, cl *types.Claim) time.Time {
	c := w.c
	if p.File == f.Name {
		return f.ChangedAt
	}
	if cl.At == types.ClaimAtRelist {
		// The relist that made it, as podwatch saw it open the folder: a
		// window said later (held for a relist that may still come early,
		// or past a later relist) would otherwise date it after the
		// kubelet's answer, which a follower then never counts.
		if i := w.madeBy(key, to); i >= 0 && w.inputs[i].Relist != nil && !w.inputs[i].At.IsZero() {
			return types.Later(f.ChangedAt, w.inputs[i].At)
		}
	}
	at := c.snapTime()
	if cl.At == types.ClaimAtRelist && !cl.Estimate && !c.snap.KubeletRelist.IsZero() {
		at = c.snap.KubeletRelist
	}
	return types.Later(f.ChangedAt, at)
}

// portEmit says a pod change with its claim, its hedges rendered from it.
func (c *computation) portEmit(ch types.Change, cl *types.Claim) {
	key := ch.Object.Namespace + "/" + ch.Object.Name
	delete(c.next.Pending, "pod/"+key)
	delete(c.livePending, "pod/"+key)
	ch.Claim = cl
	ch.Message = hedged(ch.Message, cl)
	if ps := c.next.port; ps != nil {
		// A count on the watch bounds the restarts, unless a sign of a
		// late file source was near (see claim).
		c.noteSaidIn(&ps.said, key, cl.At == types.ClaimAtWatch && cl.Before.Max != nil, cl.ID)
		ps.noteRemoved(key, cl)
	}
	c.changes = append(c.changes, ch)
}

// nextClaimID numbers a claim: the State carries the count, so that the
// numbers go on across a restart of the agent.
func (c *computation) nextClaimID() uint64 {
	c.next.ClaimSeq++
	return c.next.ClaimSeq
}
