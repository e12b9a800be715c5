package model

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// relistAtFile is a file of /m read by podwatch at at: valid with config
// cfg, or invalid for "".
func relistAtFile(name, cfg string, at time.Time) *types.File {
	f := &types.File{Name: name, Path: "/m/" + name, Complete: true, ChangedAt: at}
	if cfg == "" {
		f.Err = errors.New("invalid")
		return f
	}
	f.Pod = &types.Pod{Key: "default/" + name, Config: cfg}
	return f
}

// relistIndex is the index of the last relist among inputs, -1 for none.
func relistIndex(inputs []Input) int {
	for i := len(inputs) - 1; i >= 0; i-- {
		if inputs[i].Relist != nil {
			return i
		}
	}
	return -1
}

// The relist handed late, with the snapshot already taken in: an invalid
// write during it, before its open of the file, and the fix after it.
// The kubelet took both events in after the relist, which read the
// invalid write and dropped the pod; the fix started it again. The
// events are not taken in twice.
func TestRelistHandedAgainGoesBeforeLaterEvents(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := t0.Add(20 * time.Second)
	good, bad, fixed := relistAtFile("web.yaml", "v1", t0), relistAtFile("web.yaml", "", at.Add(39*time.Millisecond)), relistAtFile("web.yaml", "v1", at.Add(539*time.Millisecond))
	var tl Timeline
	tl.Add(types.Snapshot{Time: t0, Seq: 1, Relist: true, Path: "/m", Files: []*types.File{good}, KubeletRelist: t0})
	k := Replay(NewKubelet(), tl.Inputs())
	tl.Fold()
	write := func(seq uint64, f *types.File) types.Snapshot {
		s := types.Snapshot{Time: f.ChangedAt, Seq: seq, Path: "/m", Files: []*types.File{f}, Events: []types.WatchEvent{{Name: "web.yaml"}}, KubeletRelist: t0}
		tl.Add(s)
		return s
	}
	write(2, bad)
	s := write(3, fixed)
	if !tl.ReadAfter(at) || tl.ReadAfter(fixed.ChangedAt) {
		t.Errorf("ReadAfter: the window's events were read after %v, none after %v", at, fixed.ChangedAt)
	}
	s.KubeletRelist = at
	s.KubeletRelistRead.Written = []types.RelistWrite{{Name: "web.yaml", Before: true}}
	tl.Again(s)
	inputs := tl.Inputs()
	if len(inputs) != 3 || relistIndex(inputs) != 0 || inputs[0].Early != 0 {
		t.Fatalf("inputs %+v: want the relist first, before the two events, and no way to come after them", inputs)
	}
	states := ReplayEach(k, inputs)
	if states[0].Running("default/web.yaml") != "" || SemanticOf(states[2].Running("default/web.yaml")) != "v1" {
		t.Errorf("the relist must drop the pod, the fix start it again: %q, then %q",
			states[0].Running("default/web.yaml"), states[2].Running("default/web.yaml"))
	}
	// Handed again once more (a recheck), nothing is new.
	tl.Again(s)
	if len(tl.Inputs()) != 3 {
		t.Errorf("a second Again added inputs: %d", len(tl.Inputs()))
	}
}

// By the clocks, a write podwatch read before the relist's folder open
// came before it and was read by it; one read after came after it. A
// going of a name the open listed came after it, whatever podwatch saw
// first; of one it did not list, before.
func TestRelistPlacedAmongTheWindowsEvents(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := t0.Add(20 * time.Second)
	a1, b1 := relistAtFile("a.yaml", "a1", t0), relistAtFile("b.yaml", "b1", t0)
	a2, b2 := relistAtFile("a.yaml", "a2", at.Add(-time.Second)), relistAtFile("b.yaml", "b2", at.Add(time.Second))
	for _, tc := range []struct {
		name   string
		listed []string
		want   int // the relist's index
	}{
		{"a written before, b after", nil, 1},
		{"c gone after the open", []string{"a.yaml", "b.yaml", "c.yaml"}, 1},
		{"c gone before the open", []string{"a.yaml", "b.yaml"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := relistAtFile("c.yaml", "c1", t0)
			var tl Timeline
			tl.Add(types.Snapshot{Time: t0, Seq: 1, Relist: true, Path: "/m", Files: []*types.File{a1, b1, c}, KubeletRelist: t0})
			tl.Fold()
			tl.Add(types.Snapshot{Time: a2.ChangedAt, Seq: 2, Path: "/m", Files: []*types.File{a2, b1, c}, Events: []types.WatchEvent{{Name: "a.yaml"}}, KubeletRelist: t0})
			events := []types.WatchEvent{{Name: "b.yaml"}}
			files := []*types.File{a2, b2, c}
			if tc.listed != nil {
				events, files = append([]types.WatchEvent{{Name: "c.yaml", Gone: true}}, events...), files[:2]
			}
			s := types.Snapshot{Time: b2.ChangedAt, Seq: 3, Path: "/m", Files: files, Events: events, KubeletRelist: t0}
			tl.Add(s)
			s.KubeletRelist, s.KubeletRelistRead.Listed = at, tc.listed
			tl.Again(s)
			inputs := tl.Inputs()
			if got := relistIndex(inputs); got != tc.want {
				t.Fatalf("the relist at %d of %d inputs, want %d", got, len(inputs), tc.want)
			}
			l := inputs[tc.want].Relist
			read := func(name string) []Outcome {
				i := slices.IndexFunc(l.Files, func(f Listed) bool { return f.Path == "/m/"+name })
				if i < 0 {
					return nil
				}
				return l.Files[i].Reads
			}
			if r := read("a.yaml"); len(r) == 0 || r[0].Pod == nil || r[0].Pod.Semantic != "a2" {
				t.Errorf("a.yaml read as %+v, want a2 first", r)
			}
			if r := read("b.yaml"); len(r) == 0 || r[0].Pod == nil || r[0].Pod.Semantic != "b1" {
				t.Errorf("b.yaml read as %+v, want b1 first", r)
			}
		})
	}
}

// Once the folder went, the kubelet's watch with it, no event tells when
// a name went: one a relist's open listed, though gone from the folder by
// the time podwatch takes that relist in, was deleted after the open, and
// the relist read it as it last was (or, gone between its glob and its
// read, found it gone). A relist whose open did not list it saw it gone.
func TestUnwatchedRelistReadsWhatItsOpenListed(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	web, x := relistAtFile("web.yaml", "v1", t0), relistAtFile("x.yaml", "v1", t0)
	var tl Timeline
	tl.Add(types.Snapshot{Time: t0, Seq: 1, Relist: true, Path: "/m", Files: []*types.File{web, x}})
	tl.Add(types.Snapshot{Time: t0.Add(time.Second), Seq: 2, Relist: true, Path: "/m", PathErr: fs.ErrNotExist})
	tl.Add(types.Snapshot{Time: t0.Add(2 * time.Second), Seq: 3, Relist: true, Path: "/m", Files: []*types.File{web, x}})
	if !tl.Unwatched() {
		t.Fatal("the folder went and came back: the kubelet's watch is gone")
	}
	read := func(name string) []Outcome {
		t.Helper()
		i := relistIndex(tl.Inputs())
		if i < 0 {
			t.Fatal("no relist")
		}
		for _, l := range tl.Inputs()[i].Relist.Files {
			if filepath.Base(l.Path) == name {
				return l.Reads
			}
		}
		return nil
	}
	// web.yaml deleted after two relists' opens listed it.
	s := types.Snapshot{Time: t0.Add(3 * time.Second), Seq: 4, Path: "/m", Files: []*types.File{x}, KubeletRelist: t0.Add(2500 * time.Millisecond),
		KubeletRelistRead: types.RelistRead{Listed: []string{"web.yaml", "x.yaml"}}}
	tl.Add(s)
	for _, at := range []time.Duration{2500 * time.Millisecond, 4500 * time.Millisecond} {
		if at > 2500*time.Millisecond {
			s.KubeletRelist = t0.Add(at)
			tl.Again(s)
		}
		reads := read("web.yaml")
		if len(reads) != 2 || reads[0].Pod == nil || !errors.Is(reads[1].Err, fs.ErrNotExist) {
			t.Errorf("the relist at +%v, whose open listed web.yaml: read %+v, want its pod first, then gone", at, reads)
		}
	}
	// The next relist's open did not list it: gone for good.
	s.KubeletRelist, s.KubeletRelistRead.Listed = t0.Add(6500*time.Millisecond), []string{"x.yaml"}
	tl.Again(s)
	if reads := read("web.yaml"); reads != nil {
		t.Errorf("the relist whose open did not list web.yaml read it: %+v", reads)
	}
	s.KubeletRelist, s.KubeletRelistRead.Listed = t0.Add(8500*time.Millisecond), []string{"web.yaml", "x.yaml"}
	tl.Again(s)
	if reads := read("web.yaml"); len(reads) != 0 && reads[0].Pod != nil {
		t.Errorf("a relist after it was seen gone read web.yaml's pod: %+v", reads)
	}
}

// A name the relist's folder open listed, which then went (an editor's
// save renaming it to its backup) and came back: the going came after
// the open, and so did the coming back, whatever the open listed by that
// name. The relist falls before both, and before an earlier write podwatch
// read after the open: it read that file as it was before the write.
func TestRelistBeforeANameThatWentAndCameBack(t *testing.T) {
	const a, e = "ns/a", "ns/e"
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a1, e1 := snapFile("m", "a.yaml", a, "v1"), snapFile("m", "e.yaml", e, "w1")
	e2 := snapFile("m", "e.yaml", e, "w2")
	e2.ChangedAt = at(1019)
	bak := snapFile("m", "e.yaml~", e, "w1")
	bad := &types.File{Name: "a.yaml", Path: "m/a.yaml", Err: errors.New("invalid"), ChangedAt: at(1008), Complete: true}
	tl := &Timeline{}
	tl.Add(types.Snapshot{Time: at(0), Path: "m", Relist: true, KubeletRelist: at(0), Files: []*types.File{a1, e1}})
	tl.Add(types.Snapshot{Time: at(1010), Path: "m", KubeletRelist: at(0), Events: []types.WatchEvent{{Name: "a.yaml"}}, Files: []*types.File{bad, e1}})
	last := types.Snapshot{Time: at(1020), Path: "m", KubeletRelist: at(0), Files: []*types.File{bad, e2, bak},
		Events: []types.WatchEvent{{Name: "e.yaml", Gone: true}, {Name: "e.yaml~"}, {Name: "e.yaml"}}}
	tl.Add(last)
	last.KubeletRelist = at(1000)
	last.KubeletRelistRead = types.RelistRead{Listed: []string{"a.yaml", "e.yaml"}}
	tl.Again(last)
	for i, in := range tl.Inputs() {
		if in.Relist == nil || i == 0 {
			continue // the first list
		}
		if i != 1 {
			t.Fatalf("the relist placed at %d, want 1: before the write of a.yaml podwatch read after its open", i)
		}
		for _, f := range in.Relist.Files {
			if f.Path == "m/a.yaml" && (len(f.Reads) != 1 || f.Reads[0].Pod == nil || f.Reads[0].Pod.Semantic != "v1") {
				t.Fatalf("the relist read a.yaml as %+v, want v1", f.Reads)
			}
		}
		return
	}
	t.Fatal("no relist placed")
}

// A write that left a file's bytes as podwatch had read them (written
// and put back between two reads) is dated by the snapshot that brought
// it, not by the earlier read those bytes date from: else it would count
// as before a relist that opened the folder after that read, and the
// relist would pass over a change that came after its open, reading its
// content.
func TestRelistNotPastAnEventThatFoundTheSameBytes(t *testing.T) {
	t0, ms := lateT0, lateMs
	x := relistAtFile("x.yaml", "x1", t0)
	changed := relistAtFile("a.yaml", "v2", ms(12640))
	tl := lateWindow(relistAtFile("a.yaml", "v1", t0), x)
	tl.Add(types.Snapshot{Time: ms(12640), Seq: 2, Path: "/m", Files: []*types.File{changed, x}, Events: []types.WatchEvent{{Name: "a.yaml"}}, KubeletRelist: t0})
	s := types.Snapshot{Time: ms(12900), Seq: 3, Path: "/m", Files: []*types.File{changed, x}, Events: []types.WatchEvent{{Name: "x.yaml"}}, KubeletRelist: t0}
	tl.Add(s)
	// The relist that opened the folder at +12.35 s, handed late.
	inputs, i := handedLate(tl, s, ms(12350), "a.yaml", "x.yaml")
	if i != 0 {
		t.Errorf("the relist is input %d; want 0, before a.yaml's change read after its open", i)
	}
	if r := readsOf(inputs[i].Relist, "a.yaml"); r[0].Pod == nil || r[0].Pod.Semantic != "v1" {
		t.Errorf("the relist read a.yaml as %+v; want v1", r[0])
	}
}

// lateT0 is when lateWindow's list was taken, lateMs(n) n ms after it.
var lateT0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func lateMs(n int) time.Time { return lateT0.Add(time.Duration(n) * time.Millisecond) }

// lateWindow is a timeline whose window starts from a list of files at
// lateT0, a relist of the kubelet's then.
func lateWindow(files ...*types.File) *Timeline {
	var tl Timeline
	tl.Add(types.Snapshot{Time: lateT0, Seq: 1, Relist: true, Path: "/m", Files: files, KubeletRelist: lateT0})
	tl.Fold()
	return &tl
}

// handedLate hands s again with the relist that opened the folder at at,
// which listed names: the inputs then, and the relist's index.
func handedLate(tl *Timeline, s types.Snapshot, at time.Time, names ...string) ([]Input, int) {
	s.KubeletRelist = at
	s.KubeletRelistRead.Listed = names
	tl.Again(s)
	return tl.Inputs(), relistIndex(tl.Inputs())
}

// readsOf are the outcomes l gives name's read.
func readsOf(l *Listing, name string) []Outcome {
	for _, f := range l.Files {
		if filepath.Base(f.Path) == name {
			return f.Reads
		}
	}
	return nil
}

// When the relist's place passes over an event that came after its open
// (a later one, a name created before the open, says before it), the
// judgements disagree: the relist may have come before that event too,
// and read its name as it was then.
func TestRelistPassingOverAnEventAfterItsOpenMayHaveReadBefore(t *testing.T) {
	t0, ms := lateT0, lateMs
	changed, z := relistAtFile("a.yaml", "v2", ms(12640)), relistAtFile("z.yaml", "z1", ms(12200))
	tl := lateWindow(relistAtFile("a.yaml", "v1", t0))
	// podwatch's events of a.yaml's change and of z.yaml's creation,
	// in the byte order of a list of its own, not the order they came.
	s := types.Snapshot{Time: ms(12700), Seq: 2, Path: "/m", Files: []*types.File{changed, z},
		Events: []types.WatchEvent{{Name: "a.yaml"}, {Name: "z.yaml"}}, KubeletRelist: t0}
	tl.Add(s)
	inputs, i := handedLate(tl, s, ms(12350), "a.yaml", "z.yaml")
	if i < 1 || inputs[i].Early < i {
		t.Fatalf("the relist is input %d, early by %d; want it after z.yaml's creation, free to come before a.yaml's change", i, inputs[i].Early)
	}
	if r := readsOf(inputs[i].Relist, "a.yaml"); !slices.ContainsFunc(r, func(o Outcome) bool { return o.Pod != nil && o.Pod.Semantic == "v1" }) {
		t.Errorf("the relist's reads of a.yaml %+v: none as it was before its change", r)
	}
}

// One name's events come in order: a write read after the open, then one
// the detector saw just before it (Prior), came before it both; the
// relist reads the name as the later write left it, not as it was before
// the first.
func TestRelistOrdersOneNamesEventsAsTheLastJudged(t *testing.T) {
	t0, ms := lateT0, lateMs
	v2, v3 := relistAtFile("a.yaml", "v2", ms(12400)), relistAtFile("a.yaml", "v3", ms(12450))
	tl := lateWindow(relistAtFile("a.yaml", "v1", t0))
	tl.Add(types.Snapshot{Time: ms(12400), Seq: 2, Path: "/m", Files: []*types.File{v2}, Events: []types.WatchEvent{{Name: "a.yaml"}}, KubeletRelist: t0})
	s := types.Snapshot{Time: ms(12450), Seq: 3, Path: "/m", Files: []*types.File{v3}, Events: []types.WatchEvent{{Name: "a.yaml"}}, KubeletRelist: t0}
	tl.Add(s)
	s.KubeletRelistRead.Prior = []types.PriorWrite{{Name: "a.yaml", Since: ms(12420)}}
	inputs, i := handedLate(tl, s, ms(12350), "a.yaml")
	if i != 2 {
		t.Fatalf("the relist is input %d; want 2, after the write the detector saw before it", i)
	}
	if r := readsOf(inputs[i].Relist, "a.yaml"); slices.ContainsFunc(r, func(o Outcome) bool { return o.Pod != nil && o.Pod.Semantic == "v1" }) {
		t.Errorf("the relist's reads of a.yaml %+v: v1, from before a write that came before its open", r)
	}
}

// vim's save of a.yaml (a going and a write) read before the open, then
// b.yaml's write, also before it. The open listed a.yaml, so its going
// counts as after it and the place passes over the save; but podwatch
// read all of it before the open, which is no sign the relist came
// first: it reads a.yaml as saved.
func TestRelistPassingOverAGoingOfAListedNameReadsTheSave(t *testing.T) {
	t0, ms := lateT0, lateMs
	b := relistAtFile("b.yaml", "b1", t0)
	saved, b2 := relistAtFile("a.yaml", "v2", ms(12200)), relistAtFile("b.yaml", "b2", ms(12300))
	tl := lateWindow(relistAtFile("a.yaml", "v1", t0), b)
	tl.Add(types.Snapshot{Time: ms(12200), Seq: 2, Path: "/m", Files: []*types.File{saved, b},
		Events: []types.WatchEvent{{Name: "a.yaml", Gone: true}, {Name: "a.yaml"}}, KubeletRelist: t0})
	s := types.Snapshot{Time: ms(12300), Seq: 3, Path: "/m", Files: []*types.File{saved, b2}, Events: []types.WatchEvent{{Name: "b.yaml"}}, KubeletRelist: t0}
	tl.Add(s)
	inputs, i := handedLate(tl, s, ms(12350), "a.yaml", "b.yaml")
	if i != 3 {
		t.Fatalf("the relist is input %d; want 3, after b.yaml's write", i)
	}
	if r := readsOf(inputs[i].Relist, "a.yaml"); slices.ContainsFunc(r, func(o Outcome) bool { return o.Pod != nil && o.Pod.Semantic == "v1" }) {
		t.Errorf("the relist's reads of a.yaml %+v: v1, from before a save podwatch read before its open", r)
	}
}
