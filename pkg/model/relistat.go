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

// Where a relist of the kubelet's that podwatch saw late sits among the
// window's events. The kubelet's file source takes its relists and its
// watch events in one at a time, on one goroutine (sourceFile.run's
// select): an event whose change came after the relist's folder open is
// queued while listConfig runs, and taken in after it, whatever podwatch
// read first. podwatch learns of the relist a while after it came (the
// agent's lag), when the window may already hold later events, and places
// it where the kubelet's relist fell: after every event of a change
// before its folder open, before every event of one after it. The clocks
// order podwatch's reads against the open as the detector dated it; the
// detector's queue orders what clocks cannot (types.RelistRead): the
// files written during the relist (Written), what the folder held at the
// open (Listed) and what came after it (Came), and writes just before it
// (Prior). The relist reads each file as it was at its place, or, for a
// write during it that came before its open of the file, that write.
// Where podwatch cannot tell, the exploration takes the other ways: the
// relist may come before the recent events before it (Input.Early).

// Again takes in a snapshot handed again (the same Seq): its events are
// in already; only a relist of the kubelet's it reports for the first
// time is new, and goes where it fell.
func (t *Timeline) Again(s types.Snapshot) {
	if t.started && s.KubeletRelist.After(t.relist) {
		t.place(s, files(s.Files), t.taken-2, true)
	}
}

// ReadAfter says an event of the window was read after at: a relist
// still to be taken in that opened the folder at at may come before it.
func (t *Timeline) ReadAfter(at time.Time) bool {
	return slices.ContainsFunc(t.inputs, func(in Input) bool { return in.Event != nil && in.seen.After(at) })
}

// stamped is in, the input of s's i-th event, with when podwatch read
// the version it holds (or saw the name gone, or found the bytes it had
// read before), the snapshot it came in, and when the kubelet took it in
// as podwatch saw it (Input.At).
func (t *Timeline) stamped(in Input, s types.Snapshot, now files, i int) Input {
	in.seen, in.snap, in.At = s.Time, t.taken, s.Time
	if e := s.Events[i]; e.Gone || e.Attrib {
		return in // no version read dates a going or a chmod: its snapshot does
	}
	name := s.Events[i].Name
	if f := now.get(name); f != nil && !f.ChangedAt.IsZero() {
		if was := t.files.get(name); was == nil || !was.ChangedAt.Equal(f.ChangedAt) {
			in.seen = f.ChangedAt
		}
		// Else the read found the bytes podwatch had: ChangedAt dates
		// that earlier read, and the event's write came before s only.
	}
	return in
}

// place inserts the relist s reports where it fell among the window's
// inputs, with what it read; the events of snapshots from recent on (by
// Timeline.taken) may still have been queued when it began. dated: the
// relist is one podwatch saw, dated by it (Input.At), not an estimate.
func (t *Timeline) place(s types.Snapshot, now files, recent int, dated bool) {
	at, r := s.KubeletRelist, s.KubeletRelistRead
	t.relist = at
	// The kubelet's relists come in order: this one after every relist
	// the window holds.
	start := 0
	for i := len(t.inputs) - 1; i >= 0; i-- {
		if t.inputs[i].Relist != nil {
			start = i + 1
			break
		}
	}
	after := t.afterRelist(start, at, r)
	p := start
	for i := start; i < len(t.inputs); i++ {
		if !after[i] {
			p = i + 1
		}
	}
	early := 0
	for i := p - 1; i >= start && t.inputs[i].snap >= recent; i-- {
		early++
	}
	// The judgements disagree when the place passes over events that
	// podwatch read after the open: the relist may have come before each
	// of them, and read its name as it was before. An event of a name with
	// a later one before the open came before it too: one name's events
	// come in order. (A going judged after only because the open listed
	// the name is no such sign: the name may have come back before it.)
	passed, before := map[string]int{}, map[string]bool{}
	for i := p - 1; i >= start; i-- {
		switch e := t.inputs[i].Event; {
		case e == nil:
		case !after[i]:
			before[e.Path] = true
		case !before[e.Path] && t.inputs[i].seen.After(at):
			passed[e.Path] = i
			early = max(early, p-i)
		}
	}
	in := Input{Relist: t.listing(s, now, start, p, passed), Early: early}
	if t.unwatched {
		// A name the open did not list, or, with no list of it, that the
		// folder no longer holds, the kubelet has seen gone.
		keep := func(name string) bool { return now.get(name) != nil }
		if len(r.Listed) > 0 {
			keep = func(name string) bool { _, ok := slices.BinarySearch(r.Listed, name); return ok }
		}
		t.kept = t.kept.only(keep)
	}
	if dated {
		in.At = at
	}
	t.inputs = slices.Insert(t.inputs, p, in)
	for _, open := range t.open {
		for j, k := range open {
			if k >= p {
				open[j]++
			}
		}
	}
}

// afterRelist says, for each input from start on, that the relist
// opening the folder at at came before it: a going of a name the folder
// held after the open (listed then, come since, or read by podwatch
// after it), and every event of the name after that going; a write
// during the relist (Written) and every event of the name after it;
// and, by the clocks, a version podwatch read after the
// open, but for the first one after a write the detector saw just before
// it (Prior), and one that created a name the open listed.
func (t *Timeline) afterRelist(start int, at time.Time, r types.RelistRead) []bool {
	after := make([]bool, len(t.inputs))
	listed := func(name string) bool { _, ok := slices.BinarySearch(r.Listed, name); return ok }
	came := func(name string) bool { _, ok := slices.BinarySearch(r.Came, name); return ok }
	written := map[string]int{}
	for _, w := range r.Written {
		if i := t.writeOf(start, w, at); i >= 0 {
			written[w.Name] = i
		}
	}
	prior := map[string]bool{}
	readAfter, wentAfter := map[string]bool{}, map[string]bool{}
	for i := start; i < len(t.inputs); i++ {
		e := t.inputs[i].Event
		if e == nil {
			continue
		}
		name := filepath.Base(e.Path)
		seen := t.inputs[i].seen
		if e.Type == PodDelete {
			after[i] = listed(name) || came(name) || readAfter[name]
			wentAfter[name] = wentAfter[name] || after[i]
			continue
		}
		if wentAfter[name] {
			// Back after a going that came after the open: what the
			// open listed by that name is what went.
			after[i] = true
			continue
		}
		if seen.After(at) {
			readAfter[name] = true
		}
		if w, ok := written[name]; ok && i >= w {
			after[i] = true
			continue
		}
		if j := slices.IndexFunc(r.Prior, func(p types.PriorWrite) bool { return p.Name == name }); j >= 0 && seen.After(r.Prior[j].Since) && !prior[name] {
			prior[name] = true // the write just before the open: the relist read it
			continue
		}
		switch held := t.heldBefore(i, e.Path); {
		case len(r.Listed) > 0 && !held && listed(name):
			// Created before the open, which listed it.
		case len(r.Listed) > 0 && !held && !listed(name):
			after[i] = true // created after the open, which did not list it
		default:
			after[i] = seen.After(at)
		}
	}
	return after
}

// writeOf is the input of the write w names, as podwatch read it: the
// first of its name read after w.Since when the detector bounds it, else
// the first read after the open at at, else the last read before it
// (the detector dates a relist by the batch it read the open in, which
// may hold the write too); -1 for none.
func (t *Timeline) writeOf(start int, w types.RelistWrite, at time.Time) int {
	last := -1
	for i := start; i < len(t.inputs); i++ {
		in := t.inputs[i]
		if in.Event == nil || in.Event.Type == PodDelete || filepath.Base(in.Event.Path) != w.Name {
			continue
		}
		switch {
		case !w.Since.IsZero():
			if in.seen.After(w.Since) {
				return i
			}
		case in.seen.After(at):
			return i
		default:
			last = i
		}
	}
	return last
}

// lastBefore is the input before i that last says what path holds: its
// last event, or the window's relist that listed it; nil for none.
func (t *Timeline) lastBefore(i int, path string) *Input {
	for j := i - 1; j >= 0; j-- {
		in := &t.inputs[j]
		if in.Event != nil && in.Event.Path == path {
			return in
		}
		if in.Relist != nil {
			return in
		}
	}
	return nil
}

// heldBefore says the folder held path before input i, as the window's
// start or an input before i has it.
func (t *Timeline) heldBefore(i int, path string) bool {
	o := t.readsBefore(i, path)
	return len(o) > 0 && !errors.Is(o[0].Err, fs.ErrNotExist)
}

// readsBefore are the outcomes a read of path just before input i may
// have had, podwatch's own view first: its last event's reads, the
// window's relist's, or the window's start's file.
func (t *Timeline) readsBefore(i int, path string) []Outcome {
	in := t.lastBefore(i, path)
	switch {
	case in == nil:
		return []Outcome{view(t.from.get(filepath.Base(path)), path)}
	case in.Event != nil && in.Event.Type == PodDelete:
		return []Outcome{{Err: fs.ErrNotExist}}
	case in.Event != nil:
		return in.Reads
	}
	for _, f := range in.Relist.Files {
		if f.Path == path {
			return f.Reads
		}
	}
	return []Outcome{{Err: fs.ErrNotExist}}
}

// listing is the folder as the relist placed at p read it: each name as
// the inputs before p left it, or a write during the relist that came
// before its open of the file. Moved before the early inputs
// (Input.Early), it reads the same: a set of outcomes for each of them
// would multiply the ways past the cap.
func (t *Timeline) listing(s types.Snapshot, now files, start, p int, passed map[string]int) *Listing {
	if errors.Is(s.PathErr, fs.ErrNotExist) {
		// Gone now: podwatch's own view is that the relist found it gone.
		return &Listing{Missing: true}
	}
	r := s.KubeletRelistRead
	listed := func(name string) bool { _, ok := slices.BinarySearch(r.Listed, name); return ok }
	names := map[string]EntryKind{}
	for _, fs := range []files{t.from, t.files, now} {
		for _, f := range fs {
			names[f.Name] = kindOf(f)
		}
	}
	if t.unwatched && len(r.Listed) > 0 {
		for _, f := range t.kept {
			if _, ok := names[f.Name]; !ok && listed(f.Name) {
				names[f.Name] = kindOf(f)
			}
		}
	}
	for _, in := range t.inputs {
		if in.Event != nil && in.Event.Type != PodDelete {
			if _, ok := names[filepath.Base(in.Event.Path)]; !ok {
				names[filepath.Base(in.Event.Path)] = EntryRegular
			}
		}
	}
	l := &Listing{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		// A name the open did not list is gone before the relist's
		// place (its creation came after it, or its going before), read
		// so; one the window's start holds though the open did not list
		// it was taken in by a fold forced before the relist was handed,
		// and the relist reads it as the fold left it.
		kind := names[name]
		path := PathOf(s, name)
		ls := Listed{Entry: Entry{Path: path, Kind: kind}}
		switch {
		case kind != EntryRegular:
		case t.unwatched && now.get(name) == nil && listed(name):
			// Listed by the open, gone since: deleted after it, the
			// relist read it as it last was (or, deleted between its
			// glob and its read, found it gone).
			ls.Reads = t.listed(path, kind, t.kept.get(name), t.files.get(name)).Reads
			ls.Reads = append(ls.Reads, Outcome{Err: fs.ErrNotExist})
		case t.unwatched:
			// No event tells of the writes since the last snapshot: the
			// relist read the file as either snapshot has it.
			ls.Reads = t.listed(path, kind, now.get(name), t.files.get(name)).Reads
		default:
			ls.Reads = t.readAt(path, start, p, r)
			if i, ok := passed[path]; ok {
				for _, o := range t.readsBefore(i, path) {
					if !slices.ContainsFunc(ls.Reads, o.same) {
						ls.Reads = append(ls.Reads, o)
					}
				}
			}
		}
		l.Files = append(l.Files, ls)
	}
	return l
}

// readAt are the outcomes of the relist's read of path, placed at p:
// podwatch's own view first.
func (t *Timeline) readAt(path string, start, p int, r types.RelistRead) []Outcome {
	var out []Outcome
	add := func(os ...Outcome) {
		for _, o := range os {
			if !slices.ContainsFunc(out, o.same) {
				out = append(out, o)
			}
		}
	}
	name := filepath.Base(path)
	if i := slices.IndexFunc(r.Written, func(w types.RelistWrite) bool { return w.Name == name && w.Before }); i >= 0 {
		// Written after the folder open and before the relist opened
		// the file: it read that write (or, written after its open too,
		// the one before, or a part).
		if j := t.writeOf(start, r.Written[i], t.relist); j >= p {
			add(t.inputs[j].Reads[0])
			if r.Written[i].After {
				add(t.readsBefore(p, path)...)
				add(Outcome{Err: ErrUnread})
			}
			return out
		}
	}
	add(t.readsBefore(p, path)...)
	return out
}
