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

	"github.com/podwatch/podwatch/pkg/model"
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
	c.next.Inventory = false
	return c.portStep(prev, inPlace)
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
	podsOwned   bool // next.Pods is a copy, no longer prev's
	// estimated says the change about to be emitted is at a relist of the
	// kubelet's that podwatch did not see: its time is an estimate.
	estimated bool
	// window is the port's window after this snapshot (see port.go), the
	// zero portView when the snapshot was not taken in (podwatch could not
	// read the folder).
	window portView
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

func (c *computation) node() types.Object {
	return types.Object{Kind: types.KindNode, Name: c.opts.NodeName}
}

func (c *computation) run() {
	c.watchProblem()
	switch {
	case c.snap.PathErr != nil && errors.Is(c.snap.PathErr, fs.ErrNotExist):
		// The kubelet's relist sends an empty pod list: every pod goes,
		// as the port says.
		c.problem("path", time.Time{}, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonPathMissing, Object: c.node(), Key: problemKey("path", "not-exist"),
			Message: fmt.Sprintf("manifest path %s does not exist: the kubelet runs no static pods from it", c.opts.Path),
		})
	case c.snap.PathErr != nil:
		// podwatch's own failure, not the kubelet's verdict: keep the pods.
		c.problem("path", time.Time{}, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonUnreadable, Object: c.node(), Key: problemKey("path", fault(c.snap.PathErr)),
			Message: fmt.Sprintf("cannot read manifest path %s: %v; keeping the last known static pods", c.opts.Path, c.snap.PathErr),
		})
	default:
		// The port decides the pods: only the files' own problems here.
		for _, f := range c.snap.Files {
			c.fileProblem(f)
		}
		c.duplicates(c.definers())
	}
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

// fileProblem reports f's own problem (unreadable, invalid, ignored
// content), if any.
func (c *computation) fileProblem(f *types.File) {
	switch {
	case f.NotRegular:
	case f.ReadErr != nil:
		c.problem("unreadable/"+f.Name, f.ChangedAt, false, types.Change{
			Type: v1.EventTypeWarning, Reason: types.ReasonUnreadable, Object: c.node(), File: f.Name,
			Key:     problemKey("unreadable/"+f.Name, fault(f.ReadErr)),
			Message: fmt.Sprintf("%s: podwatch cannot read it: %v; keeping its last known pod", f.Name, f.ReadErr),
		})
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
}

// runsFrom says the kubelet runs, from the file name, the pod of the key
// the file last gave its store, which it names, as the port's own view
// has it at the end of the window; false when no window was taken in.
func (c *computation) runsFrom(name string) (string, bool) {
	if c.window.ps == nil {
		return "", false
	}
	return c.window.runsFrom(model.PathOf(c.snap, name))
}

// watchGone says the kubelet's watch of the folder ended with the folder
// (see model.Timeline.Unwatched): it takes changes
// in at its relists alone.
func (c *computation) watchGone() bool {
	return c.next.port != nil && c.next.port.tl.Unwatched()
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

// snapTime is when the snapshot was taken; now for one built without.
func (c *computation) snapTime() time.Time {
	if c.snap.Time.IsZero() {
		return c.now
	}
	return c.snap.Time
}

// watchless is effect, said at the kubelet's relist once its watch of the
// folder is gone (see watchGone), when it does not say when
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
	s, ok := c.nearSign()
	if !ok {
		return effect
	}
	runs := "runs"
	if s.may() {
		runs = "may run"
	}
	return effect + fmt.Sprintf("; the kubelet's file source %s behind (%s), so it may take in this change's events seconds apart with a relist between, and restart the pod more times on the way", runs, s.says())
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
	if !c.estimated {
		return what + " at its relist"
	}
	return what + " at its next relist" + c.within() + "; podwatch did not see that relist: its time is an estimate"
}

// within bounds the wait for the kubelet's next relist, for messages.
func (c *computation) within() string {
	if c.opts.RelistPeriod <= 0 {
		return ""
	}
	return " (within " + c.opts.RelistPeriod.String() + ")"
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

// emit says a change that is no pod's (a problem, an amendment), its
// hedges rendered from its claim, if any.
func (c *computation) emit(ch types.Change) {
	ch.Message = hedged(ch.Message, ch.Claim)
	c.changes = append(c.changes, ch)
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

// shadowed says whether f's pod is one the kubelet runs from f only until
// its next relist: another valid file later in byte order defines it.
func shadowed(files []*types.File, f *types.File) bool {
	i, _ := slices.BinarySearchFunc(files, f.Name, func(g *types.File, n string) int { return strings.Compare(g.Name, n) })
	for _, g := range files[i+1:] {
		if validPod(g) && g.Pod.Key == f.Pod.Key {
			return true
		}
	}
	return false
}

// relistWinner is the file the kubelet's next relist runs key's pod from:
// the last valid one in byte order that defines it, or nil.
func relistWinner(files []*types.File, key string) *types.File {
	for i := len(files) - 1; i >= 0; i-- {
		if validPod(files[i]) && files[i].Pod.Key == key {
			return files[i]
		}
	}
	return nil
}
