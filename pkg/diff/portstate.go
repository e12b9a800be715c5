package diff

import (
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/types"
)

// portCap bounds the distinct states a part of the window keeps after
// any input; past it a claim is capped.
const portCap = 32

// portState is the port engine's state between steps: the kubelet as its
// port holds it at the start of the window, and the window, the
// snapshots since as the port's inputs. Not persisted: after a restart the
// first snapshot, a list, rebuilds it.
type portState struct {
	base *model.Kubelet
	tl   *model.Timeline
	// versions are the files the window's events named, by path and
	// config, for a change to a version the folder no longer holds.
	versions map[string]*types.File
	// said are the runs of changes said with a count of their restarts,
	// and lateSeen the newest sign of a late file source seen, for the
	// amendments (see amend.go): what podwatch said, not the kubelet.
	said     map[string]saidRun
	lateSeen time.Time
	// folded marks the keys a forced fold dropped ways of, with the pods
	// those ways ran, nil when unknown (see portfold.go).
	folded map[string][]string
	// started are the files of the list podwatch started with while the
	// window still holds it, nil once folded (see settleStart).
	started []*types.File
	// last is the last snapshot taken in, which a recheck hands again.
	last struct {
		seq   uint64
		time  time.Time
		files *types.File
		// relist is the kubelet's relist it reported: one with another
		// is new.
		relist time.Time
	}
}

// handed says what of s is new: all of it, only the kubelet's relist
// (the agent hands a relist it took in late with the snapshot it already
// stepped: the same Seq), or nothing (a recheck). It notes s as the last.
func (ps *portState) handed(s types.Snapshot) handing {
	var first *types.File
	if len(s.Files) > 0 {
		first = s.Files[0]
	}
	l := &ps.last
	same := ps.tl.Started() && l.seq == s.Seq && (s.Seq != 0 || (l.time.Equal(s.Time) && l.files == first))
	relist := !l.relist.Equal(s.KubeletRelist)
	l.seq, l.time, l.files, l.relist = s.Seq, s.Time, first, s.KubeletRelist
	switch {
	case !same:
		return handedNew
	case relist:
		return handedRelist
	}
	return handedAgain
}

// handing is what a snapshot handed to a step brings (portState.handed).
type handing uint8

const (
	handedNew    handing = iota
	handedRelist         // the same snapshot, with a relist new to it
	handedAgain          // the same snapshot, for a recheck
)

// noteRemoved notes, after cl was said of key's pod, the REMOVE the
// kubelet may skip that an ADD said next goes with (saidRun.removed):
// cl's ID if it is one, none otherwise.
func (ps *portState) noteRemoved(key string, cl *types.Claim) {
	r, ok := ps.said[key]
	r.removed = 0
	if cl.Op == types.OpRemove && cl.MaySkip {
		r.removed = cl.ID
	}
	switch {
	case r.n > 0 || r.removed != 0:
		if ps.said == nil {
			ps.said = map[string]saidRun{}
		}
		ps.said[key] = r
	case ok:
		delete(ps.said, key)
	}
}

func newPortState() *portState {
	return &portState{base: model.NewKubelet(), tl: &model.Timeline{}}
}

func (ps *portState) clone() *portState {
	return &portState{base: ps.base.Clone(), tl: ps.tl.Clone(), versions: maps.Clone(ps.versions), last: ps.last,
		said: cloneSaid(ps.said), lateSeen: ps.lateSeen, started: ps.started, folded: maps.Clone(ps.folded)}
}

// withEvents is s with the watch events that made it from the last
// snapshot when it carries none, as the kubelet's watch would have taken
// them in: a write of each name changed, a delete of each name gone.
func (ps *portState) withEvents(s types.Snapshot) types.Snapshot {
	if s.Events != nil || !ps.tl.Started() || s.PathErr != nil {
		return s
	}
	names := s.Changed
	if names == nil {
		for _, f := range s.Files {
			names = append(names, f.Name)
		}
		names = append(names, ps.tl.LastNames()...)
		slices.Sort(names)
		names = slices.Compact(names)
	}
	events := []types.WatchEvent{}
	for _, name := range names {
		was, is := ps.tl.Last(name), lookup(s.Files, name)
		switch {
		case is == nil && was != nil:
			events = append(events, types.WatchEvent{Name: name, Gone: true})
		case is != nil && !sameFile(was, is):
			events = append(events, types.WatchEvent{Name: name})
		}
	}
	s.Events = events
	return s
}

// sameFile says whether two entries of a name hold the same for the
// kubelet.
func sameFile(a, b *types.File) bool {
	if a == nil || b == nil || a == b {
		return a == b
	}
	if (a.Pod == nil) != (b.Pod == nil) || (a.Err == nil) != (b.Err == nil) || a.NotRegular != b.NotRegular || !a.ChangedAt.Equal(b.ChangedAt) {
		return false
	}
	return a.Pod == nil || a.Pod.Config == b.Pod.Config
}

// unseenRelist gives s a relist of the kubelet's that podwatch did not
// see but knows came: the kubelet relists every period, so one fell in
// the last period, after the last one taken in. Only once no file
// changed within that period, so that the relist read every file as s
// has it, whenever it fell; a held-up kubelet relists late, and a
// relist placed too early would say a change before it made it. It says
// whether it did. Without a relist ever seen, podwatch's own stand in.
//
// Not while the kubelet's phase is known (s.KubeletRelist set): the
// agent then hands each relist as the detector sees it, and one overdue
// is a file source held up, which relists late (its ticker holds the
// tick), not one that relisted unseen.
func (ps *portState) unseenRelist(s *types.Snapshot, now time.Time, period time.Duration) bool {
	last := ps.tl.Relisted()
	at := now.Add(-period)
	if period <= 0 || last.IsZero() || !s.KubeletRelist.IsZero() || !at.After(last) {
		return false
	}
	for _, f := range s.Files {
		if f.ChangedAt.After(at) {
			return false
		}
	}
	if slices.ContainsFunc(s.Events, func(e types.WatchEvent) bool { return e.Gone }) {
		// A name gone since the last snapshot leaves no time to tell
		// whether the relist read it.
		return false
	}
	s.KubeletRelist = at
	return true
}

// note keeps the versions s's events name, for fileFor.
func (ps *portState) note(s types.Snapshot) {
	for _, e := range s.Events {
		if f := lookup(s.Files, e.Name); f != nil && f.Pod != nil {
			if ps.versions == nil {
				ps.versions = map[string]*types.File{}
			}
			ps.versions[model.PathOf(s, f.Name)+"\x00"+f.Pod.Config] = f
		}
	}
}

// fileFor is the file that holds the version of a pod the port runs: the
// folder's now, or one the window's events named.
func (ps *portState) fileFor(s types.Snapshot, p model.Pod) *types.File {
	f := lookup(s.Files, filepath.Base(p.File))
	if f != nil && validPod(f) && f.Pod.Key == p.Key && f.Pod.Config == p.Semantic {
		return f
	}
	return ps.versions[p.File+"\x00"+p.Semantic]
}

// fold takes the window into the base as e, its exploration, found
// podwatch's own view.
func (ps *portState) fold(e *model.Explored) {
	ps.foldTo(e, len(ps.tl.Inputs()))
}

// foldTo is fold of the window's first n inputs, e their exploration,
// where n is a snapshot's first (model.Timeline.FoldTo): the rest stay,
// with the versions their events name.
func (ps *portState) foldTo(e *model.Explored, n int) {
	inputs := ps.tl.Inputs()[:n]
	ps.refold(e, inputs)
	ps.base.Absorb(e, inputs)
	ps.started = nil
	if n < len(ps.tl.Inputs()) {
		ps.tl.FoldTo(n)
		return
	}
	ps.tl.Fold()
	ps.versions = nil
}

// settleStart takes the ways out of the start list's reads of files
// that have settled since: unchanged from that list on, and complete or
// quiet for the settle delay. Podwatch's first list reads files the
// kubelet listed long before, and a file not known complete may have
// been partly written when the kubelet read it; but a write after its
// read is a watch event, on which the kubelet reads the file again, so
// once the file is quiet the kubelet holds what podwatch read. Without
// this every file of the folder is a way of its own until the window is
// folded by force. Not while podwatch's watch is down or the kubelet's
// is gone with the folder: then no event tells of the writes.
func (ps *portState) settleStart(s types.Snapshot, now time.Time, settle time.Duration) {
	if ps.started == nil || !s.Watch.Up || s.PathErr != nil || s.Single || ps.tl.Unwatched() {
		return
	}
	ps.tl.NarrowFirstList(func(path string) bool {
		name := filepath.Base(path)
		was, f := lookup(ps.started, name), lookup(s.Files, name)
		return was != nil && f != nil && f.ChangedAt.Equal(was.ChangedAt) &&
			(f.Complete || !now.Before(f.ChangedAt.Add(settle)))
	})
}

// portIdentity is a published pod as the port names what runs
// (model.Kubelet.Running).
func portIdentity(s types.Snapshot, key string, p *PodState) string {
	return model.FromManifest(&types.Pod{Key: key, UID: p.UID, Config: p.Config}, model.PathOf(s, p.File)).Identity()
}
