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
