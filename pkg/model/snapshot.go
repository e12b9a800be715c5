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
	files   map[string]*types.File
	open    []int // the last snapshot's reads, by index in inputs
	started bool
	relist  time.Time // the last kubelet relist taken in
}

// Inputs are the inputs so far, in the kubelet's order. A later Add may
// widen the reads of the last snapshot's events, never anything before.
func (t *Timeline) Inputs() []Input { return t.inputs }

// Add takes snapshot s in: its watch events one by one, then the kubelet's
// relist when s says it saw a new one (free to come before any of the
// events). The first snapshot, and podwatch's own full list while no
// relist of the kubelet's is known, stand in for the kubelet's list.
func (t *Timeline) Add(s types.Snapshot) {
	now := make(map[string]*types.File, len(s.Files))
	for _, f := range s.Files {
		now[f.Name] = f
	}
	t.late(s, now)
	from := len(t.inputs)
	if !t.started || (s.Relist && !s.Extra && t.relist.IsZero()) {
		l := &Listing{Missing: errors.Is(s.PathErr, fs.ErrNotExist)}
		if !l.Missing {
			for _, f := range s.Files {
				l.Files = append(l.Files, t.listed(f.Path, kindOf(f), f))
			}
		}
		t.inputs = append(t.inputs, Input{Relist: l})
	} else {
		for i := range s.Events {
			in := t.event(s, now, i)
			if in.Event.Type != PodDelete {
				t.open = append(t.open, len(t.inputs))
			}
			t.inputs = append(t.inputs, in)
		}
	}
	if s.KubeletRelist.After(t.relist) {
		t.relist = s.KubeletRelist
		t.inputs = append(t.inputs, Input{Relist: t.relisted(s, now), Early: len(t.inputs) - from})
	}
	t.files, t.started = now, true
}

// late widens the reads of the last snapshot's events on a name s's events
// touch again: the kubelet, behind podwatch, may have read the file only
// after that, and found it gone, not decodable, or as s has it.
func (t *Timeline) late(s types.Snapshot, now map[string]*types.File) {
	open := t.open
	t.open = nil
	for _, i := range open {
		in := &t.inputs[i]
		name := filepath.Base(in.Event.Path)
		if !slices.ContainsFunc(s.Events, func(e types.WatchEvent) bool { return e.Name == name }) {
			continue
		}
		reads := slices.Clone(in.Reads)
		for _, o := range t.reads(s, now, -1, in.Event.Path, now[name], true) {
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
func (t *Timeline) event(s types.Snapshot, now map[string]*types.File, i int) Input {
	e := s.Events[i]
	path := pathOf(s, e.Name)
	if e.Gone {
		return Input{Event: &WatchEvent{Path: path, Type: PodDelete}}
	}
	f := now[e.Name]
	later := slices.ContainsFunc(s.Events[i+1:], func(x types.WatchEvent) bool { return x.Name == e.Name })
	return Input{Event: &WatchEvent{Path: path, Type: PodModify}, Reads: t.reads(s, now, i, path, f, f == nil || later || f.ReadErr != nil)}
}

// reads are the outcomes of a read of path at event i (or at a relist, i
// past the events), podwatch's view f first.
func (t *Timeline) reads(s types.Snapshot, now map[string]*types.File, i int, path string, f *types.File, unsure bool) []Outcome {
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
	if p := t.files[filepath.Base(path)]; p != nil {
		add(view(p, path))
	}
	for j, x := range s.Events {
		switch {
		case j > i && !x.Gone:
			if g := now[x.Name]; g != nil && g.Pod != nil {
				add(view(g, path))
			}
		case j < i && x.Gone:
			if g := t.files[x.Name]; g != nil && g.Pod != nil {
				add(view(g, path))
			}
		}
	}
	return out
}

// relisted is the folder as the kubelet's relist, somewhere between the
// last snapshot and s, may have listed it: every name either held or s's
// events named, each read as either had it, or as an event's read may
// have seen it.
func (t *Timeline) relisted(s types.Snapshot, now map[string]*types.File) *Listing {
	if errors.Is(s.PathErr, fs.ErrNotExist) && len(t.files) == 0 {
		return &Listing{Missing: true}
	}
	names := map[string]bool{}
	for name := range t.files {
		names[name] = true
	}
	for name := range now {
		names[name] = true
	}
	for _, e := range s.Events {
		if !e.Gone {
			names[e.Name] = true
		}
	}
	l := &Listing{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		f, p := now[name], t.files[name]
		kind := EntryRegular
		switch {
		case f != nil:
			kind = kindOf(f)
		case p != nil:
			kind = kindOf(p)
		}
		path := pathOf(s, name)
		ls := t.listed(path, kind, f, p)
		changed := f == nil || p == nil || slices.ContainsFunc(s.Events, func(e types.WatchEvent) bool { return e.Name == name })
		if kind == EntryRegular && changed {
			for _, o := range t.reads(s, now, len(s.Events), path, f, true) {
				if !slices.ContainsFunc(ls.Reads, o.same) {
					ls.Reads = append(ls.Reads, o)
				}
			}
		}
		l.Files = append(l.Files, ls)
	}
	return l
}

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
		for _, o := range t.reads(types.Snapshot{}, nil, 0, path, f, false) {
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

func pathOf(s types.Snapshot, name string) string {
	if s.Single {
		return s.Path
	}
	return filepath.Join(s.Path, name)
}
