//go:build linux

package file

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// TestChangedNamesEveryChange edits a folder at random and requires of each
// snapshot what the diff's incremental step relies on: numbered one after
// the other, and every file not named in Changed the same *File as in the
// snapshot before. A relist names nothing (nil).
func TestChangedNamesEveryChange(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml"}
	for _, n := range names[:3] {
		writeFile(t, filepath.Join(dir, n), podYAML(n[:1], "img:0"))
	}
	h := start(t, newTestSource(t, dir, nil))
	prev := h.next()
	if !prev.Relist || prev.Changed != nil || prev.Seq == 0 {
		t.Fatalf("first snapshot: relist=%v changed=%v seq=%d; want a relist naming nothing", prev.Relist, prev.Changed, prev.Seq)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	named := 0
	for i := range 40 {
		name := names[rng.IntN(len(names))]
		p := filepath.Join(dir, name)
		switch rng.IntN(5) {
		case 0:
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		case 1:
			writeFile(t, p, invalidYAML)
		case 2:
			moveIn(t, dir, name, podYAML(name[:1], fmt.Sprint("img:", i)))
		default:
			writeFile(t, p, podYAML(name[:1], fmt.Sprint("img:", i)))
		}
		// Take what the source sends until it is quiet again.
		for {
			var s types.Snapshot
			select {
			case s = <-h.out:
			case <-time.After(100 * time.Millisecond):
			}
			if s.Seq == 0 {
				break
			}
			if s.Seq != prev.Seq+1 {
				t.Fatalf("snapshot %d follows %d", s.Seq, prev.Seq)
			}
			if s.Relist {
				if s.Changed != nil {
					t.Fatalf("relist snapshot names %v", s.Changed)
				}
			} else {
				checkChanged(t, prev, s)
				named += len(s.Changed)
			}
			prev = s
		}
	}
	if named == 0 {
		t.Fatal("no snapshot named a change")
	}
}

func checkChanged(t *testing.T, prev, s types.Snapshot) {
	t.Helper()
	if s.Changed == nil || !slices.IsSorted(s.Changed) || len(slices.Compact(slices.Clone(s.Changed))) != len(s.Changed) {
		t.Fatalf("snapshot %d: Changed %q is not a sorted set", s.Seq, s.Changed)
	}
	was := map[string]*types.File{}
	for _, f := range prev.Files {
		was[f.Name] = f
	}
	is := map[string]*types.File{}
	for _, f := range s.Files {
		is[f.Name] = f
	}
	for _, n := range append(slices.Collect(maps.Keys(was)), slices.Collect(maps.Keys(is))...) {
		if was[n] != is[n] && !slices.Contains(s.Changed, n) {
			t.Fatalf("snapshot %d: %s changed but Changed is %q\nbefore: %s\nafter: %s", s.Seq, n, s.Changed, describe(prev), describe(s))
		}
	}
}
