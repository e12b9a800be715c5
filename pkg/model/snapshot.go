package model

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// ErrUnread is the outcome of a read podwatch did not see the kubelet
// make: the file partly written, or anything else that does not decode.
var ErrUnread = errors.New("read not seen: partly written or invalid")

// Timeline turns what podwatch's file source saw, snapshot by snapshot,
// into the port's inputs. The kubelet reads each file when it takes in the
// file's watch event, podwatch once per group of events: where the two
// reads may have seen different versions, the read is a choice among every
// version podwatch can name. Besides the inputs it keeps the last
// snapshot's files, for a relist that may have read them before this
// snapshot's changes, and which of the last snapshot's reads a change in
// the next one may make late: the kubelet may read a file after podwatch
// did, and find it changed again, or gone.
type Timeline struct {
	inputs  []Input
	files   files
	open    [][]int // the last lag snapshots' reads, by index in inputs
	started bool
	relist  time.Time // the last kubelet relist taken in
	// from are the files as the window's start had them (the last
	// snapshot's at the last fold), and taken counts the snapshots taken
	// in: what a relist seen late, placed among the window's events,
	// read of a file no input before it names, and which events are
	// recent enough for the kubelet to take in after it (relistat.go).
	from  files
	taken int
	// starts are, for each snapshot of the window that brought events,
	// the files of the snapshot before it: what the window starts from
	// once a fold leaves that snapshot's events and the later ones in it
	// (FoldTo).
	starts []snapStart
	// folder: a snapshot found the folder. unwatched: it went since,
	// moved or deleted, and the kubelet's doWatch with it: fsnotify drops
	// a watch whose folder goes, and the kubelet starts doWatch again only
	// when it returned, which it never does then. From there on the
	// kernel gives the kubelet no event, and relists alone take changes in.
	folder, unwatched bool
	// kept are, once unwatched, the last version podwatch saw of each
	// name a relist may still find: no event tells when a name went, so
	// one listed by a relist's open though gone since was deleted after
	// it, and read as it last was. A name leaves it at a relist that did
	// not list it.
	kept files
}

// Inputs are the inputs so far, in the kubelet's order. A later Add may
// widen the reads of the last snapshot's events, never anything before.
func (t *Timeline) Inputs() []Input { return t.inputs }

// Add takes snapshot s in: its watch events one by one, then the kubelet's
// relist when s says it saw a new one (free to come before any of the
// events of s and of the snapshot before). The first snapshot, and
// podwatch's own full list while no relist of the kubelet's is known,
// stand in for the kubelet's list. Each input is dated (Input.At): an
// event by s, the kubelet's relist by when the detector saw it, a list of
// podwatch's own not at all.
func (t *Timeline) Add(s types.Snapshot) { t.add(s, true) }

// AddUnseen is Add of s whose KubeletRelist is a relist of the kubelet's
// podwatch did not see but knows came, dated by estimate: its input
// carries no time, as the kubelet may have made it any time since the
// last.
func (t *Timeline) AddUnseen(s types.Snapshot) { t.add(s, false) }

func (t *Timeline) add(s types.Snapshot, dated bool) {
	now := files(s.Files)
	t.late(s, now)
	from := len(t.inputs)
	missing := errors.Is(s.PathErr, fs.ErrNotExist)
	gone := t.folder && missing && !t.unwatched
	t.unwatched = t.unwatched || gone
	t.folder = t.folder || s.PathErr == nil
	if gone && !s.KubeletRelist.After(t.relist) {
		// No relist of a missing folder can be seen, and one comes
		// within a period: podwatch's own view is that it came before
		// the folder is back.
		t.inputs = append(t.inputs, Input{Relist: &Listing{Missing: true}})
	}
	// A relist of the kubelet's that s reports stands for itself.
	if !t.started || (s.Relist && !s.Extra && t.relist.IsZero() && s.KubeletRelist.IsZero()) {
		l := &Listing{Missing: errors.Is(s.PathErr, fs.ErrNotExist)}
		if !l.Missing {
			for _, f := range s.Files {
				l.Files = append(l.Files, t.listed(f.Path, kindOf(f), f))
			}
		}
		t.inputs = append(t.inputs, Input{Relist: l})
	} else if !t.unwatched {
		var open []int
		for i := range s.Events {
			// One input per version the source folded in before the
			// last: the kubelet may have read, and run, each. Past
			// maxFolded of them, the last stands for the rest, and the
			// exploration is capped.
			for j := range min(s.Events[i].Folded, maxFolded) {
				if s.Events[i].Gone {
					break
				}
				in := t.stamped(t.event(s, now, i, true), s, now, i)
				in.Capped = j == maxFolded-1 && s.Events[i].Folded > maxFolded
				t.inputs = append(t.inputs, in)
				open = append(open, len(t.inputs)-1)
			}
			in := t.stamped(t.event(s, now, i, false), s, now, i)
			t.inputs = append(t.inputs, in)
			if in.Event.Type == PodDelete {
				continue
			}
			open = append(open, len(t.inputs)-1)
			if len(in.Reads) > 1 {
				// One event may stand for several of the same kind,
				// folded by the source: the kubelet read the file at
				// each, and may have found two versions.
				open = append(open, len(t.inputs))
				t.inputs = append(t.inputs, in)
			}
		}
		t.open = append(t.open, open)
		if len(t.open) > lag {
			t.open = t.open[1:]
		}
	}
	if !t.started {
		// The first list stands for the kubelet's relist it saw, if any.
		t.relist = s.KubeletRelist
	}
	if t.unwatched {
		t.kept = t.kept.with(now)
	}
	if s.KubeletRelist.After(t.relist) {
		// The kubelet may take events in a while after podwatch: its
		// relist may come before this snapshot's events and the last
		// one's, still queued.
		t.place(s, now, t.taken-1, dated)
	}
	if slices.ContainsFunc(t.inputs[from:], func(in Input) bool { return in.Event != nil && in.snap == t.taken }) {
		t.starts = append(t.starts, snapStart{snap: t.taken, from: t.files})
	}
	t.files, t.started = now, true
	t.taken++
}

// snapStart is the files of the snapshot before the snap-th taken.
type snapStart struct {
	snap int
	from files
}

// lag is how many snapshots the kubelet may take events in behind
// podwatch.
const lag = 2

// maxFolded bounds the inputs one event's folded versions make: each
// multiplies the ways by its reads' outcomes, and a few are past any
// cap's worth of distinct runs.
const maxFolded = 2

// Unsettled says a read of the last lag snapshots' events may still be
// widened by the next snapshot (late): podwatch never read the file
// whole, as it went first or was being written, or the read has a choice.
// A window folded now would lose the versions the next events show it
// may have had (sed's temp file read partly, then renamed).
func (t *Timeline) Unsettled() bool {
	for _, i := range slices.Concat(t.open...) {
		in := t.inputs[i]
		if len(in.Reads) > 1 {
			return true
		}
		if f := t.files.get(filepath.Base(in.Event.Path)); f == nil || !f.Complete {
			return true
		}
	}
	return false
}

// late widens the reads of the last lag snapshots' events on a name s's
// events touch again: the kubelet, behind podwatch, may have read the
// file only after that, and found it gone, not decodable, or as s has it.
// A name whose going ended the last snapshot's events, s's first event
// bringing another in, is a rename chain across the two: the version
// that went may be the one that came.
func (t *Timeline) late(s types.Snapshot, now files) {
	went := ""
	if n := len(t.inputs); n > 0 && t.inputs[n-1].Event != nil && t.inputs[n-1].Event.Type == PodDelete {
		went = t.inputs[n-1].Event.Path
	}
	var came *types.File
	if len(s.Events) > 0 && !s.Events[0].Gone {
		came = now.get(s.Events[0].Name)
	}
	for _, i := range slices.Concat(t.open...) {
		in := &t.inputs[i]
		name := filepath.Base(in.Event.Path)
		if !slices.ContainsFunc(s.Events, func(e types.WatchEvent) bool { return e.Name == name }) {
			if o := view(came, in.Event.Path); in.Event.Path == went && o.Pod != nil && !slices.ContainsFunc(in.Reads, o.same) {
				in.Reads = append(slices.Clone(in.Reads), o)
			}
			continue
		}
		reads := slices.Clone(in.Reads)
		// A version podwatch never read: one s replaced (two writes),
		// or one the file held before it went and came back, which s
		// shows happened before podwatch's read (the file as podwatch
		// read it then).
		n, gone := 0, false
		for _, e := range s.Events {
			if e.Name == name {
				gone = gone || e.Gone
				if !e.Gone {
					n++
				}
			}
		}
		was, is := t.files.get(name), now.get(name)
		replaced := n > 1 || (gone && was != nil && is != nil && was.ChangedAt.Equal(is.ChangedAt))
		for _, o := range t.reads(s, now, -1, in.Event.Path, now.get(name), true, replaced, false) {
			if !slices.ContainsFunc(reads, o.same) {
				reads = append(reads, o)
			}
		}
		in.Reads = reads
	}
}

// event is the input of s's i-th watch event. podwatch read the file once
// after the events; the kubelet read it at this one. The two may differ
// when the file was not complete (a partial write), or when it changed
// again after this event: then the kubelet may have found it gone, not
// decodable, as the last snapshot had it, or holding what a later name of
// the events holds now (a temp file renamed onto the manifest) or what an
// earlier name went away with (a backup taken by renaming).
//
// folded makes it the input of one of the events the source folded into
// s's i-th before the last (types.WatchEvent.Folded): a write in chunks,
// or a write and a rename onto the name. Versions came after it, so the
// kubelet's read there may have found one podwatch never read; the input
// of the event itself is the last one's.
func (t *Timeline) event(s types.Snapshot, now files, i int, folded bool) Input {
	e := s.Events[i]
	path := PathOf(s, e.Name)
	if e.Gone {
		return Input{Event: &WatchEvent{Path: path, Type: PodDelete}}
	}
	f := now.get(e.Name)
	later := folded || slices.ContainsFunc(s.Events[i+1:], func(x types.WatchEvent) bool { return x.Name == e.Name })
	replaced := folded || slices.ContainsFunc(s.Events[i+1:], func(x types.WatchEvent) bool { return x.Name == e.Name && !x.Gone })
	return Input{Event: &WatchEvent{Path: path, Type: PodModify}, Reads: t.reads(s, now, i, path, f, f == nil || later || f.ReadErr != nil, replaced, f == nil)}
}

// reads are the outcomes of a read of path at event i of s (-1 before
// them, len(s.Events) after them), podwatch's view f first. When unsure,
// the kubelet may have read another version: gone, not decodable, as the
// last snapshot had it, or along a rename chain. When replaced (a later
// event wrote the name again), the version may also be one podwatch never
// read at all; so when gone (the file went before podwatch read it), but
// for a name whose going the rename chain follows: its content is the
// version the chain moved on (sed's temp file, renamed onto the
// manifest). A file deleted and another moved in give the same events as
// a rename, so a version written and deleted unread while another name
// came is taken for the one that came.
func (t *Timeline) reads(s types.Snapshot, now files, i int, path string, f *types.File, unsure, replaced, gone bool) []Outcome {
	var out []Outcome
	add := func(o Outcome) {
		if !slices.ContainsFunc(out, o.same) {
			out = append(out, o)
		}
	}
	add(view(f, path))
	if f != nil && !f.Complete {
		add(Outcome{Err: ErrUnread})
	}
	if !unsure {
		return out
	}
	add(Outcome{Err: fs.ErrNotExist})
	add(Outcome{Err: ErrUnread})
	name := filepath.Base(path)
	if p := t.files.get(name); p != nil {
		add(view(p, path))
	}
	// The rename chain: a name that goes, the next event bringing
	// another in (a temp file renamed onto the manifest), went with what
	// that one holds now; a name that came just after another went (a
	// backup taken by renaming) holds what that one held.
	chained := false
	for j := i + 1; j >= 0 && j+1 < len(s.Events); j++ {
		if e := s.Events[j]; e.Name == name && e.Gone {
			if g := now.get(s.Events[j+1].Name); !s.Events[j+1].Gone && g != nil && g.Pod != nil {
				add(view(g, path))
				chained = true
			}
			break
		}
	}
	if i > 0 && i < len(s.Events) && s.Events[i-1].Gone {
		if g := t.files.get(s.Events[i-1].Name); g != nil && g.Pod != nil {
			add(view(g, path))
		}
	}
	if !replaced && (!gone || chained) {
		return out
	}
	// A version written and replaced between two reads of podwatch's:
	// of a key the file's known versions give, or else any name's of
	// the events, with content unknown.
	keys := map[string]bool{}
	for _, o := range out {
		if o.Pod != nil {
			keys[o.Pod.Key] = true
		}
	}
	if len(keys) == 0 {
		for _, e := range s.Events {
			for _, g := range []*types.File{now.get(e.Name), t.files.get(e.Name)} {
				if g != nil && g.Pod != nil {
					keys[g.Pod.Key] = true
				}
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		add(Outcome{Pod: &Pod{Key: key, UID: Unseen + path + " as " + key, Semantic: Unseen + path, File: path}})
	}
	return out
}

// Unseen starts the UID and Semantic of a pod podwatch never read: a
// version of a file that came and went between two of its reads, which
// the kubelet may have read and run. All such versions of a path that
// give one key are one pod, so that two reads of the same unseen version
// restart nothing; two different ones the kubelet ran in turn are then
// counted as one. Versions of two keys differ in content, so their UIDs
// differ, as the kubelet's derived ones would.
const Unseen = "(unseen) "

// listed is a name of a relist read as one of the versions podwatch read
// of it (nil ones left out).
func (t *Timeline) listed(path string, kind EntryKind, versions ...*types.File) Listed {
	l := Listed{Entry: Entry{Path: path, Kind: kind}}
	if kind != EntryRegular {
		return l
	}
	for _, f := range versions {
		if f == nil {
			continue
		}
		for _, o := range t.reads(types.Snapshot{}, nil, 0, path, f, false, false, false) {
			if !slices.ContainsFunc(l.Reads, o.same) {
				l.Reads = append(l.Reads, o)
			}
		}
	}
	return l
}

// view is what podwatch read of f at path: its pod, why not, or gone.
func view(f *types.File, path string) Outcome {
	switch {
	case f == nil:
		return Outcome{Err: fs.ErrNotExist}
	case f.Pod != nil:
		p := FromManifest(f.Pod, path)
		return Outcome{Pod: &p}
	case f.Err != nil:
		return Outcome{Err: f.Err}
	}
	return Outcome{Err: ErrUnread}
}

// same says whether o and x do the same to the port: the same pod, or no
// pod (gone and invalid apart, for whoever reads the choices).
func (o Outcome) same(x Outcome) bool {
	if o.Pod != nil || x.Pod != nil {
		return o.Pod != nil && x.Pod != nil && *o.Pod == *x.Pod
	}
	return errors.Is(o.Err, fs.ErrNotExist) == errors.Is(x.Err, fs.ErrNotExist)
}

func kindOf(f *types.File) EntryKind {
	switch {
	case !f.NotRegular:
		return EntryRegular
	case f.Mode.IsDir():
		return EntryDir
	case f.Mode&fs.ModeSymlink != 0:
		return EntryStatErr
	}
	return EntryOther
}

// PathOf is the path the kubelet reads name at, for a snapshot of s's
// folder.
func PathOf(s types.Snapshot, name string) string {
	if s.Single {
		return s.Path
	}
	return filepath.Join(s.Path, name)
}
