//go:build linux

package kubelet_test

import (
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// A loaded kubelet's sync loop logs a REMOVE seconds after its relist
// decided it, after the fix that followed and after a later relist: the
// line pairs with the relist that could not make a pod of the file, not
// with a relist after the last step before the line.
func TestDeciderPairsALateLineWithItsDrop(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const dir = "/d/manifests"
	names := []string{"web.yaml"}
	relist := func(ms int, failed bool) kubelet.Read {
		return kubelet.Read{At: at(ms), Path: dir + "/web.yaml", Relist: true, Failed: failed}
	}
	for _, tc := range []struct {
		name  string
		steps []folderStep
		reads []kubelet.Read
		lines []time.Time
		want  []time.Time
		by    []bool
	}{{
		name:  "broken, fixed, the line after the next relist",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(10_000), verb: "write"}, {at: at(11_000), verb: "write"}},
		reads: []kubelet.Read{relist(8_000, false), relist(10_500, true), {At: at(11_001), Path: dir + "/web.yaml"}, relist(12_500, false)},
		lines: []time.Time{at(16_000)},
		want:  []time.Time{at(10_500)},
		by:    []bool{true},
	}, {
		name:  "broken across two relists: dropped at the first",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(10_000), verb: "write"}, {at: at(15_000), verb: "write"}},
		reads: []kubelet.Read{relist(10_500, true), relist(12_500, true), relist(14_500, true)},
		lines: []time.Time{at(13_000)},
		want:  []time.Time{at(10_500)},
		by:    []bool{true},
	}, {
		name:  "two spans, two lines, each with its own drop",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(10_000), verb: "write"}, {at: at(11_000), verb: "write"}, {at: at(20_000), verb: "write"}, {at: at(21_000), verb: "write"}},
		reads: []kubelet.Read{relist(10_500, true), {At: at(11_001), Path: dir + "/web.yaml"}, relist(20_500, true)},
		lines: []time.Time{at(22_000), at(22_001)},
		want:  []time.Time{at(10_500), at(20_500)},
		by:    []bool{true, true},
	}, {
		name:  "deleted after a drop the pod was not in: the watch's",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(10_000), verb: "write"}, {at: at(12_000), verb: "remove"}},
		reads: []kubelet.Read{relist(10_500, true), relist(12_500, false)},
		lines: []time.Time{at(12_010)},
		want:  []time.Time{at(12_010)},
		by:    []bool{false},
	}, {
		name:  "deleted as a relist read it: the watch's",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(12_000), verb: "remove"}},
		reads: []kubelet.Read{relist(12_001, true)},
		lines: []time.Time{at(12_010)},
		want:  []time.Time{at(12_001)},
		by:    []bool{false},
	}, {
		name:  "no failed read: the first relist after the last step",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(10_000), verb: "write"}},
		reads: []kubelet.Read{relist(9_000, false), relist(10_500, false), relist(12_500, false)},
		lines: []time.Time{at(11_000)},
		want:  []time.Time{at(10_500)},
		by:    []bool{true},
	}, {
		name:  "no valid file: the store sent again, dropped at the next relist",
		steps: []folderStep{{at: at(0), verb: "write"}, {at: at(10_000), verb: "write"}},
		reads: []kubelet.Read{relist(10_500, true), relist(12_500, true)},
		lines: []time.Time{at(10_501), at(12_501)},
		want:  []time.Time{at(10_500), at(12_500)},
		by:    []bool{true, true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			decided := decider(tc.steps, relistDrops(tc.reads, nil, dir, names), tc.reads, dir, names)
			for i, line := range tc.lines {
				d := decided(line)
				got, by := d.at, d.byRelist
				failed := slices.ContainsFunc(tc.reads, func(r kubelet.Read) bool { return r.Relist && r.Failed && r.At.Equal(got) })
				if d.drop != (by && failed) {
					t.Errorf("line %d at +%v: a drop: %v, want %v (only a relist's failed read is)", i, line.Sub(t0), d.drop, by && failed)
				}
				if !got.Equal(tc.want[i]) || by != tc.by[i] {
					t.Errorf("line %d at +%v: decided at +%v (by a relist: %v), want +%v (%v)", i, line.Sub(t0), got.Sub(t0), by, tc.want[i].Sub(t0), tc.by[i])
				}
			}
		})
	}
}

// A relist that read a manifest truncated (os.WriteFile empties it first)
// while the .bak defining the same pod read whole kept the pod from the
// .bak: no drop (measured: shadowed-edited, whose judge took the watch's
// restart to the written manifest for a drop and its REMOVE for two). The
// relist after, with the .bak gone, drops it.
func TestRelistDropsOnlyWhenNoFileOfThePodReadWhole(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const dir = "/d/manifests"
	read := func(ms int, name string, failed bool) kubelet.Read {
		return kubelet.Read{At: at(ms), Path: dir + "/" + name, Relist: true, Failed: failed}
	}
	relists := []kubelet.Relist{{Began: at(0), Ended: at(5)}, {Began: at(2000), Ended: at(2005)}, {Began: at(4000), Ended: at(4005)}}
	reads := []kubelet.Read{
		read(1, "web.yaml", true), read(2, "web.yaml.bak", false),
		read(2001, "web.yaml", true),
		read(4001, "web.yaml", true),
	}
	got := relistDrops(reads, relists, dir, []string{"web.yaml", "web.yaml.bak"})
	want := []relistDrop{{at(2001), true}, {at(4001), false}}
	if !slices.Equal(got, want) {
		t.Fatalf("drops %+v, want %+v", got, want)
	}
}

// A relist read made while the last step still wrote (cp over a file as
// the relist read it: measured, the kubelet's and podwatch's watch reads
// just after failed on the part-written file, and the next relist
// dropped the pod) is paired, but marked: it may have read the old
// content.
func TestDeciderMarksAReadDuringTheStep(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 11, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const dir = "/d/manifests"
	names := []string{"web.yaml"}
	reads := []kubelet.Read{{At: at(5), Path: dir + "/web.yaml", Relist: true}, {At: at(2005), Path: dir + "/web.yaml", Relist: true}}
	for _, tc := range []struct {
		end    int
		during bool
	}{{10, true}, {3, false}} {
		steps := []folderStep{{at: at(0), verb: "cp", end: at(tc.end)}}
		d := decider(steps, nil, reads, dir, names)(at(5000))
		if !d.at.Equal(at(5)) || !d.byRelist || d.during != tc.during {
			t.Errorf("step done at +%dms: decided at +%v (by a relist: %v, during the step: %v), want +5ms (true, %v)", tc.end, d.at.Sub(t0), d.byRelist, d.during, tc.during)
		}
	}
}
