package diff

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// kubeletView is the kubelet's file source as podwatch follows it. The
// kubelet acts on a watch event at once and only on the file it names, and
// replaces what it holds only at its relist:
//
//   - a file created, written or moved in and valid goes into its store
//     under the pod's key, replacing whatever file gave that key, so a
//     shadowed file just written wins until the next relist;
//   - a file turned invalid changes nothing: its last good pod runs on;
//   - a file deleted or moved away drops the pod its name last gave (its
//     fileKeyMapping), whichever file that pod came from now;
//   - a relist replaces the store with the folder's valid files, the last
//     in byte order winning per key, and records each one's key; a relist
//     that finds no valid file at all sends an empty pod list but keeps the
//     store, so the next store change brings all of it back.
//
// What the kubelet runs is then its store, or nothing after an empty relist.
type kubeletView struct {
	store map[string]string // pod key -> file its pod was last read from
	keys  map[string]string // file -> key of its last good parse
	empty bool              // the last relist found no valid file
	// files is the snapshot last taken in, to tell which files a snapshot
	// without Changed touched; seq is its number.
	files []*types.File
	seq   uint64
	// relist is the kubelet relist last taken in (Snapshot.KubeletRelist).
	relist time.Time
	// plain says the store is exactly one entry per valid file, each
	// under its own key, and nothing else: what a relist of the folder
	// would give. The plain and incremental paths need it.
	plain bool
	// dropped holds, per key the last step took out of the store on a
	// watch event, the deleted file that did it. A recheck of the same
	// snapshot keeps it, and passed, for the changes held back until then.
	dropped map[string]string
	// waiting holds, per key whose REMOVE a drop caused and that waits to
	// settle, that drop (see wait): in a busy folder another file's
	// snapshot, which clears dropped, may come before the REMOVE is due.
	waiting map[string]waitingDrop
	// returnOwed holds, per key a shadowed file's UPDATE said runs from
	// it until the next relist, the return that relist makes, until
	// podwatch takes a relist in or says the key again (see
	// returnowed.go).
	returnOwed map[string]owedReturn
	// raced holds, per key the relist last taken in dropped for a write
	// on both sides of its read of the file, that drop (see racedrop.go).
	raced map[string]racedDrop
	// went holds, per name whose going the watch took in since the last
	// relist, the key it last gave and when podwatch first read it, if the
	// watch created it since (see goneAfter).
	went map[string]wentName
	// passed holds, per key, the files the watch events gave it before
	// the one the step ended with, in order, since the key's last message:
	// each a restart the kubelet's sync loop was told of on the way.
	passed map[string][]string
	// droppedOnWay holds, per key, the names whose going dropped its pod
	// on the way to a file that gave it again before the last: each a
	// restart the sync loop may be told of (see play).
	droppedOnWay map[string][]string
	// lastDrop holds, per key a step's events left out of the store, the
	// name whose going did it: the next step's events that give the pod a
	// file on the way to another start from that drop.
	lastDrop map[string]string
	// held keeps the pods reported removed after an empty relist while
	// the store still holds them: the next store change brings them back.
	held map[string]*PodState
	// The kubelet reads a file when it takes in the file's event, which
	// may be after the file went or before it was whole: whether it read
	// a file created and gone again at once (sed -i's temp file, renamed
	// over the manifest) is a race podwatch cannot see. Until the relist:
	//   - born holds, per name the watch created (absent from the
	//     snapshot before), when podwatch first saw its content;
	//     goneBorn, per step, those of them that went, with that time;
	//   - unread holds the names the watch wrote that podwatch has not
	//     read whole (gone before it read them, or read mid-write), and
	//     lastGone is one gone as the last step's last event, which a
	//     name moved in at the next step's first may be the rename of;
	//   - owed holds, per key, the names that may have given its pod on
	//     the way, which no message has named yet (see
	//     computation.onTheWay);
	//   - from holds, per key an event touched, the file the store gave
	//     it when each step began, until a message says the key (a change
	//     may wait a step or more to settle).
	born, goneBorn map[string]time.Time
	unread         map[string]bool
	lastGone       string
	owed           map[string][]string
	from           map[string][]string
	// midway, halves and partial follow a file written in pieces while
	// open (see midway.go): per name, the events podwatch took in while
	// it was open, and the UPDATEs it said from a part; per key, the reads
	// of a part no message named yet.
	midway, halves map[string]int
	partial        map[string]partialRead
	// unwatched holds the names the first list after a start read and no
	// watch event has named since: not known complete, and not known open.
	unwatched map[string]bool
	// maybeRead and mayDrop follow a backup renamed in and deleted before
	// podwatch read it (see backup.go).
	maybeRead, mayDrop map[string]string
	// replayDrop holds, per key, the name whose going the kubelet may take
	// in after a relist that read the pod's new file (see replay.go).
	replayDrop map[string]string
	// versions and bounced follow writes made during a relist (see
	// midrelist.go): per name the watch changed since the last relist,
	// each content podwatch read; per key, a relist's drop that the watch
	// undid since, until the changes that say it went out.
	versions map[string][]*types.File
	bounced  map[string]bounce
	// sent is when the watch last changed the store, which makes the
	// kubelet send all of it (an empty relist's kept store with it), and
	// sentBy the name whose event did it (see revived).
	sent   time.Time
	sentBy string
	// invalidSince, fixed and period follow a file invalid for less than
	// a relist period while the phase is unknown (see shortinvalid.go):
	// per name that gave the store its pod, when it turned invalid; per
	// key, the fix of such a file, until the changes that say it went
	// out; the kubelet's relist period.
	invalidSince map[string]time.Time
	fixed        map[string]fixedSpan
	period       time.Duration
	// lastRenamed is the key of a known name gone as the last step's last
	// event, which a name moved in at the next step's first may be the
	// rename of.
	lastRenamed string
	// watchGone: the folder went (moved away or deleted) since podwatch
	// started. The kubelet's watch went with it for good (fsnotify drops a
	// watch whose folder is moved or deleted, and the kubelet restarts only
	// a watch that failed), so it takes in every change at its relists
	// only, until it restarts, which podwatch cannot see. seenFolder: a
	// snapshot found the folder.
	watchGone, seenFolder bool
	// relisted: the snapshot taken in last brought a relist, which a
	// recheck of it may still have changes of to say.
	relisted bool
	// What a relist podwatch did not see takes back, so that a follower
	// can tell the pod it runs (types.TakeBack); at is when the step's
	// snapshot was taken:
	//   - ran holds, per key, the file and content the store gives it and
	//     when podwatch saw the kubelet take them in (a watch event's
	//     snapshot, or a relist it saw; zero after a relist it stood in
	//     for, whose time bounds nothing the kubelet did);
	//   - back holds, per key a watch event gave another file since the
	//     last relist, ran's entry before and when that event was seen;
	//     a second such event, or the key dropped, leaves it unknown (not
	//     ok): the relist no longer takes back the pod one event replaced;
	//   - takenBack holds, per key, what this step's relist took back;
	//   - wentBack holds, per key, the file this step's relist, taken in
	//     late, ran the pod from between two watch events that gave it
	//     another file (see replace).
	at        time.Time
	ran       map[string]ranFrom
	back      map[string]displaced
	takenBack map[string]takenBack
	wentBack  map[string]wentBack
	// said and lateSeen follow the changes said with a count of the
	// restarts on their way before a sign that the file source runs
	// behind (see amend.go): per key, the first such change and how many
	// changes of the pod were said since; the newest sign amended for.
	said     map[string]saidRun
	lateSeen time.Time
}

// ranFrom is what the kubelet runs a pod from, and since when (see ran).
type ranFrom struct {
	file, config string
	at           time.Time
}

// displaced is the pod a watch event replaced (see back).
type displaced struct {
	ran   ranFrom
	since time.Time
	ok    bool
}

// takenBack is a relist's return to the file a watch event displaced.
type takenBack struct {
	file string
	back types.TakeBack
}

// wentBack is a relist's return to the file a watch event displaced,
// undone by the watch since: file is the one the relist ran the pod
// from, at its folder open, then the one the watch gave it before and
// after.
type wentBack struct {
	file, then string
	at         time.Time
}

// hold keeps p, removed while the store still holds key.
func (v *kubeletView) hold(key string, p PodState) {
	if v.held == nil {
		v.held = map[string]*PodState{}
	}
	v.held[key] = &p
}

// clone copies v for a step that must leave v as it was.
func (v *kubeletView) clone() *kubeletView {
	if v == nil {
		return nil
	}
	n := *v
	n.store = maps.Clone(v.store)
	n.keys = maps.Clone(v.keys)
	n.held = maps.Clone(v.held)
	n.dropped, n.passed, n.droppedOnWay = maps.Clone(v.dropped), maps.Clone(v.passed), maps.Clone(v.droppedOnWay)
	n.went, n.waiting, n.returnOwed, n.raced = maps.Clone(v.went), maps.Clone(v.waiting), maps.Clone(v.returnOwed), maps.Clone(v.raced)
	n.lastDrop = maps.Clone(v.lastDrop)
	n.born, n.goneBorn, n.unread = maps.Clone(v.born), maps.Clone(v.goneBorn), maps.Clone(v.unread)
	n.owed, n.from = maps.Clone(v.owed), maps.Clone(v.from)
	n.ran, n.back, n.takenBack, n.wentBack = maps.Clone(v.ran), maps.Clone(v.back), maps.Clone(v.takenBack), maps.Clone(v.wentBack)
	n.midway, n.halves, n.partial = maps.Clone(v.midway), maps.Clone(v.halves), maps.Clone(v.partial)
	n.unwatched = maps.Clone(v.unwatched)
	n.maybeRead, n.mayDrop, n.replayDrop = maps.Clone(v.maybeRead), maps.Clone(v.mayDrop), maps.Clone(v.replayDrop)
	n.versions, n.bounced = maps.Clone(v.versions), maps.Clone(v.bounced)
	n.invalidSince, n.fixed = maps.Clone(v.invalidSince), maps.Clone(v.fixed)
	n.said = cloneSaid(v.said)
	return &n
}

// kubeletRelisted says whether snap brings a kubelet relist not yet taken
// in, and whether that relist is podwatch's own standing in for it.
func kubeletRelisted(v *kubeletView, snap types.Snapshot) (relisted, estimated bool) {
	if k := snap.KubeletRelist; !k.IsZero() {
		return v == nil || k.After(v.relist), false
	}
	// podwatch's own lists (Snapshot.Extra) are none of the kubelet's: its
	// watch took in the changes, as the snapshot's events give them.
	return snap.Relist && !snap.Extra, true
}

// again says snap is the one v took in last, handed again for a recheck.
func (v *kubeletView) again(snap types.Snapshot) bool {
	return v != nil && snap.Seq != 0 && snap.Seq == v.seq && snap.KubeletRelist.Equal(v.relist)
}

// relistAgain says snap is the one v took in last, and it brought a relist.
func (v *kubeletView) relistAgain(snap types.Snapshot) bool {
	return v.again(snap) && v.relisted
}

// step takes snap into v: a relist replaces the store, any other snapshot
// plays the files it changed as the kubelet's watch events. period is the
// kubelet's relist period (0: unknown). It returns v, or a new view when v
// is nil.
func (v *kubeletView) step(snap types.Snapshot, relist bool, period time.Duration) *kubeletView {
	if v == nil {
		v = &kubeletView{store: map[string]string{}, keys: map[string]string{}}
		relist = true
		// What the first list reads was written before podwatch watched:
		// whether a file is still open is unknown, not a race to report.
		v.unwatched = map[string]bool{}
		for i := range snap.Files {
			v.unwatched[snap.Files[i].Name] = true
		}
	}
	v.period = period
	if v.again(snap) {
		// The same snapshot again, for a recheck: taken in already, and
		// what its step dropped and passed still tells what is held back.
		return v
	}
	// bounced and fixed stay until the changes they word went out (see
	// settleOwed): in a busy folder another file's snapshot may come
	// before the ADD they word is due.
	v.dropped, v.goneBorn, v.takenBack, v.wentBack = nil, nil, nil, nil
	v.at = snap.Time
	if snap.PathErr != nil && !errors.Is(snap.PathErr, fs.ErrNotExist) {
		// podwatch cannot tell what the kubelet reads: the next snapshot
		// is taken in against the last one read.
		return v
	}
	if snap.PathErr == nil {
		v.seenFolder = true
	} else if v.seenFolder {
		// A folder missing from the start is another matter: the kubelet
		// retries its watch until the folder exists.
		v.watchGone = true
	}
	var changed []string // what the watch, or a relist, takes in
	if !v.watchGone || relist {
		changed = v.changed(snap)
		v.noteInvalid(snap, changed)
	}
	if !relist && !v.watchGone {
		for _, name := range changed {
			if f := lookup(snap.Files, name); f != nil {
				v.noteVersion(name, f)
			}
		}
	}
	if relist {
		v.replace(snap)
	} else if !v.watchGone && snap.Events != nil && snap.Seq != 0 && snap.Seq == v.seq+1 {
		v.play(snap)
	} else if !v.watchGone {
		v.lastGone, v.lastRenamed = "", ""
		// Without the events' order: a name gone goes first, as a
		// rename's old name leaves before the new one arrives, and a name
		// gone takes its pod with it (see watchEvent).
		for _, name := range changed {
			if f := lookup(snap.Files, name); f == nil {
				v.watchEvent(name, nil)
			}
		}
		for _, name := range changed {
			if f := lookup(snap.Files, name); f != nil {
				v.watchEvent(name, f)
			}
		}
	}
	v.pruneInvalid()
	v.files, v.seq, v.relisted = snap.Files, snap.Seq, relist
	if !snap.KubeletRelist.IsZero() {
		v.relist = snap.KubeletRelist
	}
	return v
}

// changed names the files snap changed since the snapshot v took in last,
// in byte order: Changed when it follows on from it, otherwise the files
// whose entry is not the same and was seen changing since.
func (v *kubeletView) changed(snap types.Snapshot) []string {
	if snap.Changed != nil && snap.Seq != 0 && snap.Seq == v.seq+1 {
		if slices.IsSorted(snap.Changed) {
			return snap.Changed
		}
		return slices.Compact(slices.Sorted(slices.Values(snap.Changed)))
	}
	var out []string
	a, b := v.files, snap.Files
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].Name < b[0].Name):
			out, a = append(out, a[0].Name), a[1:]
		case len(a) == 0 || b[0].Name < a[0].Name:
			out, b = append(out, b[0].Name), b[1:]
		default:
			// A relist may give an unchanged file a new entry; its content
			// (or kind, or read failure) is the same while ChangedAt is.
			if a[0] != b[0] && !a[0].ChangedAt.Equal(b[0].ChangedAt) {
				out = append(out, b[0].Name)
			}
			a, b = a[1:], b[1:]
		}
	}
	return out
}

// play takes snap's watch events in the order they happened, as the
// kubelet does, each against the file as podwatch read it. A file gone
// before podwatch could read it is left out: whether the kubelet read it
// first is a race (vim's backup, renamed in and deleted within
// milliseconds, is mostly gone by then). Where the store gave a key
// another file on the way to the one it ends with, passed says so; where
// such a file, unread, was renamed onto the one that gives a key (sed -i's
// temp file), owed names it: the kubelet may have read it first.
func (v *kubeletView) play(snap types.Snapshot) {
	// trail holds, per key an event touched, the file the store gave it
	// before and after each event ("" for none).
	trail := map[string][]string{}
	by := map[string][]string{} // per key, the name whose event made each step of its trail
	gone := v.lastGone          // an unread name that just went, "" for none
	renamed := v.lastRenamed    // the key of a known name that just went
	for _, ev := range snap.Events {
		var f *types.File
		from := renamed
		renamed = ""
		if !ev.Gone {
			f = lookup(snap.Files, ev.Name)
			if f == nil && from != "" {
				v.renamedIn(ev.Name, from)
			}
			if gone != "" && gone != ev.Name && f != nil && validPod(f) {
				// Moved in just as the unread name went: a rename, whose
				// target podwatch read holds what the kubelet may have
				// read from the name before.
				v.owe(f.Pod.Key, gone)
			}
			gone = ""
			v.foldedEvent(ev)
			v.openEvent(ev.Name, f, true)
			if f == nil || !f.Complete {
				// Not read whole: the kubelet may have read a valid pod
				// from it that podwatch never saw.
				if v.unread == nil {
					v.unread = map[string]bool{}
				}
				v.unread[ev.Name] = true
			} else {
				delete(v.unread, ev.Name)
			}
			if f == nil {
				continue
			}
			if lookup(v.files, ev.Name) == nil && v.born[ev.Name].IsZero() {
				if v.born == nil {
					v.born = map[string]time.Time{}
				}
				v.born[ev.Name] = f.ChangedAt
			}
		} else {
			v.openEvent(ev.Name, nil, true)
			gone = ""
			if _, known := v.keys[ev.Name]; v.unread[ev.Name] && !known {
				gone = ev.Name
			}
			if key, known := v.keys[ev.Name]; known {
				renamed = key
			} else {
				v.unreadGone(ev.Name)
			}
			delete(v.unread, ev.Name)
		}
		key, ok := v.keys[ev.Name]
		if f != nil && validPod(f) {
			key, ok = f.Pod.Key, true
		}
		if ok && trail[key] == nil {
			trail[key] = []string{v.store[key]}
		}
		v.watchEvent(ev.Name, f)
		if t := trail[key]; ok && t[len(t)-1] != v.store[key] {
			trail[key] = append(t, v.store[key])
			by[key] = append(by[key], ev.Name)
		}
	}
	v.lastGone, v.lastRenamed = gone, renamed
	for key, t := range trail {
		if t[0] != "" && t[0] != t[len(t)-1] {
			v.from = addNames(v.from, key, t[:1])
		}
	}
	for key, t := range trail {
		if len(t) < 3 {
			continue // no file between the one before and the one after
		}
		var mid []string
		for _, name := range t[1 : len(t)-1] {
			if name != "" && name != t[len(t)-1] && !slices.Contains(mid, name) {
				mid = append(mid, name)
			}
		}
		v.passed = addNames(v.passed, key, mid)
		// A drop before another file gave the pod is a restart of its
		// own when the kubelet's relist came before it took in the
		// events (it reads the folder then, and the events replay over
		// it): the drop stops what that relist started.
		var drops []string
		if by, ok := v.lastDrop[key]; ok && t[0] == "" && len(t) > 2 {
			drops = append(drops, by) // the drop was the last step's
		}
		for i := 1; i < len(t)-2; i++ {
			if t[i] == "" && !slices.Contains(drops, by[key][i-1]) {
				drops = append(drops, by[key][i-1])
			}
		}
		v.droppedOnWay = addNames(v.droppedOnWay, key, drops)
	}
	for key, t := range trail {
		v.noteReplayDrop(key, t, by[key])
	}
	for key, t := range trail {
		switch {
		case len(t) == 1:
			continue // the events changed nothing for key
		case t[len(t)-1] != "":
			delete(v.lastDrop, key)
			continue
		}
		if v.lastDrop == nil {
			v.lastDrop = map[string]string{}
		}
		v.lastDrop[key] = by[key][len(by[key])-1]
	}
	// A change no event the kubelet acts on explains (a close after the
	// last write, read whole only then) is taken as the old way did.
	for _, name := range v.changed(snap) {
		if !slices.ContainsFunc(snap.Events, func(ev types.WatchEvent) bool { return ev.Name == name }) {
			f := lookup(snap.Files, name)
			v.openEvent(name, f, false)
			v.watchEvent(name, f)
		}
	}
}

// addNames adds names to m's list for key, each once, and returns m: the
// lists add up over the steps until a message for key says them (see
// computation.emit), as a change may wait a step or more to settle.
func addNames(m map[string][]string, key string, names []string) map[string][]string {
	for _, name := range names {
		if slices.Contains(m[key], name) {
			continue
		}
		if m == nil {
			m = map[string][]string{}
		}
		m[key] = append(slices.Clip(m[key]), name)
	}
	return m
}

// waitingDrop is the watch event that dropped a pod whose REMOVE waits:
// the name whose going did it, and whether the kubelet read that name
// before it went was a race when the step took it in (computation.young).
type waitingDrop struct {
	by    string
	young bool
}

// wait keeps, until key's REMOVE goes out, the drop that causes it.
func (v *kubeletView) wait(key, by string, young bool) {
	if v.waiting == nil {
		v.waiting = map[string]waitingDrop{}
	}
	v.waiting[key] = waitingDrop{by: by, young: young}
}

// owe notes name as one that may have given key's pod on the way.
func (v *kubeletView) owe(key, name string) {
	if slices.Contains(v.owed[key], name) {
		return
	}
	if v.owed == nil {
		v.owed = map[string][]string{}
	}
	v.owed[key] = append(slices.Clip(v.owed[key]), name)
}

// watchEvent is the kubelet's handling of a watch event for name, which
// now is f (nil when gone).
func (v *kubeletView) watchEvent(name string, f *types.File) {
	switch {
	case f == nil:
		born, wasBorn := v.born[name]
		if wasBorn {
			if v.goneBorn == nil {
				v.goneBorn = map[string]time.Time{}
			}
			v.goneBorn[name] = born
			delete(v.born, name)
		}
		key, ok := v.keys[name]
		if !ok {
			return
		}
		delete(v.keys, name)
		if v.went == nil {
			v.went = map[string]wentName{}
		}
		v.went[name] = wentName{key: key, born: born}
		if _, held := v.store[key]; !held {
			return // the kubelet finds nothing to delete and sends nothing
		}
		if v.store[key] != name || v.empty {
			v.plain = false // another file's pod goes, or the store comes back
		}
		delete(v.store, key)
		delete(v.ran, key)
		if _, ok := v.back[key]; ok {
			v.back[key] = displaced{}
		}
		if v.dropped == nil {
			v.dropped = map[string]string{}
		}
		v.dropped[key] = name
		v.empty = false
		v.sent, v.sentBy = v.at, name
	case validPod(f):
		v.took(name, f.Pod)
	default:
		// Unreadable, invalid or no regular file: the kubelet's read fails
		// and it keeps what it has, the file's last good pod included.
		if key, ok := v.keys[name]; ok && v.store[key] == name {
			v.plain = false
		}
	}
}

// took is the kubelet reading a valid pod of key from name on a watch
// event: it goes into the store under key, whatever file gave it before.
func (v *kubeletView) took(name string, p *types.Pod) {
	key := p.Key
	if old, ok := v.store[key]; ok && old != name {
		v.plain = false // a second file for the key, or a shadowed one
		if !v.empty {
			v.displace(key, name)
		}
	}
	if old, ok := v.keys[name]; ok && old != key {
		if v.store[old] == name {
			v.plain = false // the file's old pod runs on until a relist
		}
	}
	if v.empty {
		v.plain = false // the whole store comes back
	}
	v.store[key] = name
	v.keys[name] = key
	v.empty = false
	v.sent, v.sentBy = v.at, name
	v.setRan(key, ranFrom{file: name, config: p.Config, at: v.at})
}

// displace notes a watch event that gives key the file name in place of
// the one the kubelet ran its pod from (see back).
func (v *kubeletView) displace(key, name string) {
	b, again := v.back[key]
	switch {
	case again && b.ok && b.ran.file == name:
		delete(v.back, key) // the file displaced is back: nothing for a relist to take back
	case again:
		v.back[key] = displaced{}
	default:
		if v.back == nil {
			v.back = map[string]displaced{}
		}
		v.back[key] = displaced{ran: v.ran[key], since: v.at, ok: true}
	}
}

// setRan records r as what the kubelet runs key's pod from, unless it
// already ran it from that file and content.
func (v *kubeletView) setRan(key string, r ranFrom) {
	if old, ok := v.ran[key]; ok && old.file == r.file && old.config == r.config {
		return
	}
	if v.ran == nil {
		v.ran = map[string]ranFrom{}
	}
	v.ran[key] = r
}

// tookBack records, for a relist that replaced the store with store, the
// keys it gave back the file a single watch event had displaced, with
// the same content (and when the kubelet began to run it, zero when
// unknown), and what the kubelet now runs each key from (at: the relist's
// time, zero when podwatch did not see it).
func (v *kubeletView) tookBack(snap types.Snapshot, store map[string]string, at time.Time) {
	back := v.back
	v.back = nil
	for key, b := range back {
		if displacedAfter(b, at) {
			// Displaced after this relist, which is taken in late: the
			// next relist is the one that takes the pod back.
			if v.back == nil {
				v.back = map[string]displaced{}
			}
			v.back[key] = b
			delete(back, key)
		}
	}
	ran := make(map[string]ranFrom, len(store))
	for key, name := range store {
		r := ranFrom{file: name, at: at}
		if f := lookup(snap.Files, name); f != nil && validPod(f) {
			r.config = f.Pod.Config
		}
		if b, ok := back[key]; ok && b.ok && !b.since.IsZero() &&
			b.ran.file == r.file && b.ran.config == r.config && r.config != "" {
			if v.takenBack == nil {
				v.takenBack = map[string]takenBack{}
			}
			v.takenBack[key] = takenBack{file: name, back: types.TakeBack{Since: b.since, Ran: b.ran.at}}
		}
		if old, ok := v.ran[key]; ok && old.file == r.file && old.config == r.config {
			r = old
		}
		ran[key] = r
	}
	v.ran = ran
}

// displacedAfter says a watch event displaced b's pod after a kubelet
// relist seen at at (zero: podwatch's own relist, whose time bounds
// nothing).
func displacedAfter(b displaced, at time.Time) bool {
	return !at.IsZero() && b.since.After(at)
}

// replace is the kubelet's relist of snap's folder.
func (v *kubeletView) replace(snap types.Snapshot) {
	// The relist read every file: what the watch may have read before is
	// what this relist replaces.
	unlisted := v.bornUnlisted(snap)
	v.born, v.unread, v.owed, v.lastGone, v.maybeRead, v.lastDrop, v.lastRenamed = nil, nil, nil, "", nil, nil, ""
	v.returnOwed = nil // said as this relist is taken in
	v.raced = nil      // the next relist read the file again
	went := v.goneAfter(snap)
	v.went = nil
	if snap.PathErr != nil {
		v.empty, v.plain = true, false // no folder: an empty pod list
		v.ran, v.back = nil, nil
		return
	}
	// A relist seen after the fact read the files as they were then: one
	// changed since is as the watch events after the relist left it, and
	// those came after the relist, so what they put in the store stands
	// over what the relist read (see below). One written during the
	// relist before it read it is another matter: the relist read that
	// write (see midrelist.go).
	at := snap.KubeletRelist
	written, prior := midRelistWritten(snap), priorWritten(snap)
	later := func(f *types.File) bool {
		if w, ok := written[f.Name]; ok && w.After && !w.Before {
			// Written after the relist read it, by the detector's queue:
			// the relist's time, which may be dated late, says nothing.
			return true
		}
		return unlisted[f.Name] || !at.IsZero() && f.ChangedAt.After(at)
	}
	type midRead struct {
		read  *types.File
		since bool // the watch took a content in after it
	}
	var mid map[string]midRead
	for name, w := range written {
		if f := lookup(snap.Files, name); f != nil && w.Before {
			if mid == nil {
				mid = map[string]midRead{}
			}
			// The write came after w.Since, which is closer to it than
			// the relist's folder open, seen when the detector read it.
			anchor := at
			if !w.Since.IsZero() {
				anchor = w.Since
			}
			r, since := v.readByRelist(f, anchor)
			mid[name] = midRead{r, since}
		}
	}
	for _, f := range snap.Files {
		// Changed since the folder open, and not written while the relist
		// ran: written before it, and read by it as podwatch read it last
		// before then (or after, for a write the detector saw just before
		// the open), if podwatch kept that content. Not one created after
		// the open: the relist never read it.
		if _, ok := written[f.Name]; ok || unlisted[f.Name] || !later(f) {
			continue
		}
		if r := v.readAtOpen(f, at, prior[f.Name]); r != nil {
			if mid == nil {
				mid = map[string]midRead{}
			}
			mid[f.Name] = midRead{r, true}
		}
	}
	// What the watch took in after this relist is the next relist's to
	// have read (readAtOpen), however late that one is taken in; those
	// before it were this one's, done with above.
	v.versions = v.versionsAfter(snap, at, later)
	store := make(map[string]string, len(v.store))
	plain := true
	for _, f := range snap.Files {
		r := f
		m, isMid := mid[f.Name]
		switch {
		case isMid:
			r = m.read
		case later(f):
			continue
		}
		switch {
		case validPod(r):
			if _, dup := store[r.Pod.Key]; dup {
				plain = false
			}
			store[r.Pod.Key] = f.Name // the last in byte order wins
			if !m.since {
				v.keys[f.Name] = r.Pod.Key
			}
		case r.ReadErr != nil:
			// podwatch cannot read it; the kubelet may: its pod stays as
			// it was for podwatch's purposes.
			if key, ok := v.keys[f.Name]; ok && v.store[key] == f.Name {
				if _, taken := store[key]; !taken {
					store[key] = f.Name
				}
				plain = false
			}
		}
	}
	if len(store) > 0 {
		// podwatch's own relist stands in: a file invalid for less than a
		// period keeps its pod (see shortinvalid.go). A relist with no
		// valid file at all is the empty one, whichever it is.
		for _, f := range snap.Files {
			key, ok := v.keys[f.Name]
			if _, taken := store[key]; ok && !taken && v.store[key] == f.Name && f.Err != nil && v.keepsInvalid(snap, f.Name) {
				store[key] = f.Name
				plain = false
			}
		}
	}
	if v.revived(snap, store, at, later, len(mid) > 0) {
		plain = false
	}
	var read map[string]bool // the keys the relist itself gave a file, where mid-change reads matter
	if len(mid) > 0 {
		read = make(map[string]bool, len(store))
		for key := range store {
			read[key] = true
		}
	}
	for key, name := range v.store {
		f := lookup(snap.Files, name)
		if f == nil {
			continue
		}
		if m, ok := mid[name]; ok {
			if m.since && gives(f, key) {
				v.noteWentBack(key, name, store[key], at)
				store[key] = name
				plain = false
			}
			continue
		}
		if later(f) {
			store[key] = name
			plain = false
		}
	}
	// With no watch (the folder went, and its watch with it), nothing
	// takes a going in but a relist: a name the relist listed at its
	// folder open, gone since, was read by it, and its pod stays until a
	// relist finds it gone.
	kept := v.listedGone(snap, store)
	for key, name := range kept {
		store[key] = name
		plain = false
	}
	if !v.empty {
		for key, name := range v.store {
			m, ok := mid[name]
			if !ok || store[key] != name {
				continue
			}
			w, during := written[name]
			b := bounce{file: name, read: m.read, at: at, may: w.After, during: during}
			switch {
			case !read[key] && m.since:
			case read[key] && b.may:
				// The relist may have read a part, written on both sides.
			default:
				continue
			}
			if v.bounced == nil {
				v.bounced = map[string]bounce{}
			}
			v.bounced[key] = b
			plain = false
		}
	}
	for name, key := range v.keys {
		if lookup(snap.Files, name) != nil || kept[key] == name {
			continue
		}
		// Gone, though no watch event said so yet: the relist read the
		// folder before the watch took its going in. When the pod ran
		// from it and the relist found it in another file (a rename), the
		// kubelet's going event, taken in after its own relist, may drop
		// the pod once more (replay.go).
		if n, ok := store[key]; ok && n != name && v.store[key] == name {
			if v.replayDrop == nil {
				v.replayDrop = map[string]string{}
			}
			v.replayDrop[key] = name
		}
		delete(v.keys, name)
	}
	v.raced = racedDrops(v.store, store, written, at)
	if len(store) == 0 && len(v.store) > 0 {
		v.empty, v.plain = true, false
		v.ran, v.back = nil, nil
		return
	}
	for _, key := range went {
		delete(store, key)
		plain = false
	}
	v.tookBack(snap, store, at)
	v.store, v.empty, v.plain = store, false, plain
	for key := range v.held {
		if _, ok := store[key]; !ok {
			delete(v.held, key)
		}
	}
}

// listedGone gives, when the view has no watch, the pods of the store
// whose files snap's relist listed at its folder open and that are gone
// now: by key, the file. nil with a watch, or without the detector's list.
func (v *kubeletView) listedGone(snap types.Snapshot, store map[string]string) map[string]string {
	listed := snap.KubeletRelistRead.Listed
	if !v.watchGone || len(listed) == 0 {
		return nil
	}
	var out map[string]string
	for key, name := range v.store {
		if _, taken := store[key]; taken || lookup(snap.Files, name) != nil {
			continue
		}
		if _, ok := slices.BinarySearch(listed, name); !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = name
	}
	return out
}

// noteWentBack records, for a relist taken in after the watch took in a
// write of name that came after it, that the relist ran key's pod from
// won, the file it read last for the key, when a watch event before the
// relist had displaced won by name: the kubelet ran the pod from name,
// then from won at the relist, then from name again on the watch, two
// restarts where the view, which took the later write in first, saw one.
func (v *kubeletView) noteWentBack(key, name, won string, at time.Time) {
	b, ok := v.back[key]
	if won == "" || won == name || !ok || !b.ok || b.ran.file != won || at.IsZero() || !b.since.Before(at) {
		return
	}
	if v.wentBack == nil {
		v.wentBack = map[string]wentBack{}
	}
	v.wentBack[key] = wentBack{file: won, then: name, at: at}
}

// running is what the kubelet runs: its store, or nothing after a relist
// that found no valid file.
func (v *kubeletView) running() map[string]string {
	if v.empty {
		return nil
	}
	return v.store
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
