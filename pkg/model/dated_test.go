package model

import (
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The merge dates a pod by when it first took its UID in
// (recordFirstSeenTime), keeps that date through an update of the same
// UID (checkAndUpdatePod), and dates it anew once it was removed and
// comes back.
func TestMergeDatesPodsFirstSeen(t *testing.T) {
	t1, t2, t3 := time.Unix(100, 0), time.Unix(200, 0), time.Unix(300, 0)
	st := NewStorage()
	a := Pod{Key: "ns/a", UID: "u", Semantic: "v1", File: "m/a.yaml"}
	st.MergeAt(&Update{Pods: []Pod{a}}, t1)
	b := a
	b.Semantic = "v2"
	st.MergeAt(&Update{Pods: []Pod{b}}, t2)
	if got := st.pods["u"]; !got.Seen.Equal(t1) || got.Semantic != "v2" {
		t.Fatalf("updated in place: %+v, want v2 first seen at %v", got, t1)
	}
	st.MergeAt(&Update{Pods: []Pod{}}, t2)
	st.MergeAt(&Update{Pods: []Pod{b}}, t3)
	if got := st.pods["u"]; !got.Seen.Equal(t3) {
		t.Fatalf("back after a remove: first seen %v, want %v", got.Seen, t3)
	}
}

// Each input carries when podwatch saw the kubelet take it in: a watch
// event its snapshot's time, the kubelet's relist the detector's; a list
// of podwatch's own standing in, or a relist dated by estimate, none.
// The port dates the pods it starts by them.
func TestTimelineDatesInputs(t *testing.T) {
	const key = "ns/a"
	t1, t2, t3 := time.Unix(100, 0), time.Unix(200, 0), time.Unix(300, 0)
	v1, v2 := snapFile("m", "a.yaml", key, "v1"), snapFile("m", "a.yaml", key, "v2")
	tl := &Timeline{}
	tl.Add(types.Snapshot{Time: t1, Path: "m", Relist: true, Files: []*types.File{v1}})
	tl.Add(types.Snapshot{Time: t2, Path: "m", Events: []types.WatchEvent{{Name: "a.yaml"}}, Files: []*types.File{v2}})
	tl.Add(types.Snapshot{Time: t3, Path: "m", Files: []*types.File{v2}, KubeletRelist: t3.Add(-time.Second), Events: []types.WatchEvent{}})
	var got []time.Time
	for _, in := range tl.Inputs() {
		got = append(got, in.At)
	}
	if want := []time.Time{{}, t2, t3.Add(-time.Second)}; !slices.Equal(got, want) {
		t.Fatalf("dated %v, want %v", got, want)
	}
	k := Replay(NewKubelet(), tl.Inputs())
	if p, _ := k.Pod(key); !p.Seen.Equal(t2) {
		t.Fatalf("the pod the event started: first seen %v, want %v", p.Seen, t2)
	}

	est := tl.Clone()
	est.AddUnseen(types.Snapshot{Time: t3.Add(time.Minute), Path: "m", Files: []*types.File{v2}, KubeletRelist: t3.Add(30 * time.Second), Events: []types.WatchEvent{}})
	if in := est.Inputs()[len(est.Inputs())-1]; in.Relist == nil || !in.At.IsZero() || !est.Relisted().Equal(t3.Add(30*time.Second)) {
		t.Fatalf("a relist dated by estimate: %+v, relisted %v; want no time on the input, the estimate kept as the last relist", in, est.Relisted())
	}
}

// sed's temp file, written and gone before podwatch read it, the rename's
// target moved in only in the next snapshot: the rename chain runs across
// the two, and the temp file's read may have found the target's content.
// Until then the read is unsettled: a window folded would lose it.
func TestTimelineRenameChainAcrossSnapshots(t *testing.T) {
	const key = "ns/a"
	v1, v2 := snapFile("m", "a.yaml", key, "v1"), snapFile("m", "a.yaml", key, "v2")
	tl, p, from := listedTimeline(v1)
	if tl.Unsettled() {
		t.Fatalf("a first list alone is unsettled")
	}
	tl.Add(types.Snapshot{Path: "m", Events: []types.WatchEvent{{Name: "sedX1"}}, Files: []*types.File{v1}})
	if !tl.Unsettled() {
		t.Fatalf("a name gone before podwatch read it is settled")
	}
	tl.Add(types.Snapshot{Path: "m", Events: []types.WatchEvent{{Name: "sedX1", Gone: true}}, Files: []*types.File{v1}})
	tl.Add(types.Snapshot{Path: "m", Events: []types.WatchEvent{{Name: "a.yaml"}}, Files: []*types.File{v2}})
	read := tl.Inputs()[from].Reads
	if !slices.ContainsFunc(read, func(o Outcome) bool { return o.Pod != nil && o.Pod.Semantic == "v2" && o.Pod.File == "m/sedX1" }) {
		t.Fatalf("the temp file's read %+v has not the target's content", read)
	}
	a1, a2 := FromManifest(v1.Pod, v1.Path), FromManifest(v2.Pod, v2.Path)
	wantSpan(t, Explore(p.k, tl.Inputs()[from:], 64).Span(key), id(&a1), id(&a2), types.Bounded(0, 1), false, 0)

	// Written and closed, read whole: settled at once.
	tl, _, _ = listedTimeline(v1)
	tl.Add(types.Snapshot{Path: "m", Events: []types.WatchEvent{{Name: "a.yaml"}}, Files: []*types.File{v2}})
	if tl.Unsettled() {
		t.Fatalf("a whole read is unsettled")
	}
	// Read while still open for writing: unsettled.
	half := *v2
	half.Complete = false
	tl.Add(types.Snapshot{Path: "m", Events: []types.WatchEvent{{Name: "a.yaml"}}, Files: []*types.File{&half}})
	if !tl.Unsettled() {
		t.Fatalf("a read of a file still being written is settled")
	}
}

// An event the source folded several versions into is an input per
// version: the kubelet may have run each, a restart more apiece. Past
// maxFolded the last stands for the rest and the exploration is capped.
func TestTimelineFoldedVersionsEach(t *testing.T) {
	const key = "ns/a"
	v1, v3 := snapFile("m", "a.yaml", key, "v1"), snapFile("m", "a.yaml", key, "v3")
	a1, a3 := FromManifest(v1.Pod, v1.Path), FromManifest(v3.Pod, v3.Path)
	for _, tc := range []struct {
		folded, inputs int
		before         types.Range
		capped         bool
	}{
		{1, 2, types.Bounded(0, 1), false},
		{2, 3, types.Bounded(0, 2), false},
		{5, maxFolded + 1, types.Range{Min: 0}, true},
	} {
		tl, p, from := listedTimeline(v1)
		tl.Add(types.Snapshot{Path: "m", Events: []types.WatchEvent{{Name: "a.yaml", Folded: tc.folded}}, Files: []*types.File{v3}})
		if n := len(tl.Inputs()) - from; n != tc.inputs {
			t.Errorf("folded %d: %d inputs, want %d", tc.folded, n, tc.inputs)
		}
		e := Explore(p.k, tl.Inputs()[from:], 32)
		if e.Capped != tc.capped {
			t.Errorf("folded %d: capped %v, want %v", tc.folded, e.Capped, tc.capped)
		}
		wantSpan(t, e.Span(key), id(&a1), id(&a3), tc.before, false, 0)
	}
}
