package model

import (
	"errors"
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
