package model

import (
	"testing"
	"time"

	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/podwatch/podwatch/pkg/types"
)

// The start list's reads of a file not known complete are two ways:
// narrowed, only podwatch's own view stays, for the paths asked for; a
// clone taken before keeps both.
func TestNarrowFirstListKeepsOwnViewAndClones(t *testing.T) {
	at := time.Unix(1000, 0)
	file := func(name string) *types.File {
		return &types.File{Name: name, Path: "/m/" + name, ChangedAt: at,
			Pod: &types.Pod{Key: "default/" + name, UID: ktypes.UID("uid-" + name), Config: "c-" + name}}
	}
	var tl Timeline
	tl.Add(types.Snapshot{Time: at, Path: "/m", Relist: true, Files: []*types.File{file("a.yaml"), file("b.yaml")}})
	before := tl.Clone()
	if !tl.NarrowFirstList(func(path string) bool { return path == "/m/a.yaml" }) {
		t.Fatal("nothing narrowed")
	}
	reads := func(tl *Timeline) []int {
		var n []int
		for _, f := range tl.Inputs()[0].Relist.Files {
			n = append(n, len(f.Reads))
		}
		return n
	}
	if got := reads(&tl); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("reads after narrowing a.yaml: %v, want [1 2]", got)
	}
	if o := tl.Inputs()[0].Relist.Files[0].Reads[0]; o.Pod == nil || o.Pod.Key != "default/a.yaml" {
		t.Errorf("a.yaml kept %+v, want podwatch's own read", o)
	}
	if got := reads(before); got[0] != 2 || got[1] != 2 {
		t.Errorf("the clone's reads: %v, want [2 2]", got)
	}
	if tl.NarrowFirstList(func(path string) bool { return path == "/m/a.yaml" }) {
		t.Error("narrowed again what was narrow")
	}
}
