package model

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A relist the detector saw open web.yaml before a write to it read the
// version before, whatever the snapshot that reports it holds: podwatch's
// own view takes the relist in before that write's event. An invalid
// write leaves the pod running; a valid one runs, not the version the
// relist read.
func TestRelistOpenedBeforeTheWriteReadTheVersionBefore(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	good := &types.File{Name: "web.yaml", Path: "/m/web.yaml", Pod: &types.Pod{Key: "default/web", Config: "v1"}, Complete: true, ChangedAt: t0}
	bad := &types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("invalid"), Complete: true, ChangedAt: t0.Add(3 * time.Second)}
	v2 := &types.File{Name: "web.yaml", Path: "/m/web.yaml", Pod: &types.Pod{Key: "default/web", Config: "v2"}, Complete: true, ChangedAt: t0.Add(3 * time.Second)}
	for _, tc := range []struct {
		name   string
		write  *types.File
		before bool   // the write came before the relist opened the file
		runs   string // the config that runs at the end
	}{
		{"invalid, opened before the write", bad, false, "v1"},
		{"invalid, opened after the write", bad, true, ""},
		{"valid, opened before the write", v2, false, "v2"},
		{"valid, opened after the write", v2, true, "v2"},
	} {
		var tl Timeline
		tl.Add(types.Snapshot{Time: t0, Relist: true, Path: "/m", Files: []*types.File{good}, KubeletRelist: t0})
		k := Replay(NewKubelet(), tl.Inputs())
		tl.Fold()
		tl.Add(types.Snapshot{
			Time: t0.Add(3 * time.Second), Seq: 2, Path: "/m", Files: []*types.File{tc.write},
			Events: []types.WatchEvent{{Name: "web.yaml"}}, KubeletRelist: t0.Add(2 * time.Second),
			KubeletRelistRead: types.RelistRead{Written: []types.RelistWrite{{Name: "web.yaml", Before: tc.before}}},
		})
		if got := SemanticOf(Replay(k, tl.Inputs()).Running("default/web")); got != tc.runs {
			t.Errorf("%s: %q runs, want %q", tc.name, got, tc.runs)
		}
	}
}

// An empty relist drops every pod and keeps the store: the next event
// that sends the store starts them again, though it names another file,
// and exploring what the event touches alone must still see them.
func TestExploreTouchedSeesPodsAnEmptyRelistKept(t *testing.T) {
	pod := func(name string) *Pod {
		return &Pod{Key: "default/" + name, UID: name, Semantic: name, File: "/m/" + name + ".yaml"}
	}
	listing := func(pods ...*Pod) Input {
		l := &Listing{}
		for _, name := range []string{"a", "b"} {
			o := Outcome{Err: errors.New("invalid")}
			for _, p := range pods {
				if p.Key == "default/"+name {
					o = Outcome{Pod: p}
				}
			}
			l.Files = append(l.Files, Listed{Entry: Entry{Path: "/m/" + name + ".yaml"}, Reads: []Outcome{o}})
		}
		return Input{Relist: l}
	}
	k := NewKubelet()
	k.Take([]Input{listing(pod("a"), pod("b")), listing()})
	if k.Running("default/a") != "" {
		t.Fatal("the empty relist left pod a running")
	}
	c := pod("c")
	e := ExploreTouched(k, []Input{{Event: &WatchEvent{Path: c.File, Type: PodModify}, Reads: []Outcome{{Pod: c}}}}, 16)
	if s := e.Span("default/a"); s.To != pod("a").Identity() {
		t.Errorf("pod a after an event of c.yaml: %q, want it started again", s.To)
	}
}

// podV is version v of the pod name in /m/name.yaml.
func podV(name, v string) *Pod {
	return &Pod{Key: "default/" + name, UID: name + v, Semantic: v, File: "/m/" + name + ".yaml"}
}

// relistedABC is a kubelet that listed a, b and c, each at version 1.
func relistedABC() *Kubelet {
	l := &Listing{}
	for _, name := range []string{"a", "b", "c"} {
		l.Files = append(l.Files, Listed{Entry: Entry{Path: "/m/" + name + ".yaml"}, Reads: []Outcome{{Pod: podV(name, "1")}}})
	}
	k := NewKubelet()
	k.Take([]Input{{Relist: l}})
	return k
}

// Absorbing a window's exploration changes the base as replaying the
// window in full does, touching only what the window touched.
func TestAbsorbIsTake(t *testing.T) {
	base := relistedABC()
	inputs := []Input{
		{Event: &WatchEvent{Path: "/m/a.yaml", Type: PodModify}, Reads: []Outcome{{Pod: podV("a", "2")}}},
		{Event: &WatchEvent{Path: "/m/b.yaml", Type: PodDelete}},
		{Event: &WatchEvent{Path: "/m/d.yaml", Type: PodModify}, Reads: []Outcome{{Pod: podV("d", "1")}}},
	}
	took, absorbed := base.Clone(), base.Clone()
	took.Take(inputs)
	absorbed.Absorb(ExploreTouched(base, inputs, 16), inputs)
	var a, b strings.Builder
	took.fingerprint(&a)
	absorbed.fingerprint(&b)
	if a.String() != b.String() {
		t.Errorf("absorbed:\n%q\nreplayed:\n%q", b.String(), a.String())
	}
}

// A relist of many files of one key, each read with a choice, has more
// combinations than any cap keeps: the exploration is capped, not taken
// along all of them.
func TestRelistOfManyChoicesIsCapped(t *testing.T) {
	l := &Listing{}
	for i := range 14 {
		path := "/m/" + string(rune('a'+i)) + ".yaml"
		p := Pod{Key: "default/web", UID: path, Semantic: path, File: path}
		l.Files = append(l.Files, Listed{Entry: Entry{Path: path}, Reads: []Outcome{{Pod: &p}, {Err: ErrUnread}, {Pod: &Pod{Key: "default/web", UID: "u", Semantic: "u", File: path}}}})
	}
	start := time.Now()
	e := Explore(NewKubelet(), []Input{{Relist: l}}, 32)
	if !e.Capped {
		t.Error("3^14 ways of one relist: not capped")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// A manifest that renames its pod and keeps metadata.uid leaves the merge
// holding the pod under its old name (checkAndUpdatePod keeps the name),
// which the store no longer gives: Running finds it there all the same.
func TestStrayPodRunsUnderItsOldKey(t *testing.T) {
	listing := func(key string) *Listing {
		p := &Pod{Key: key, UID: "fixed", Semantic: key, File: "/m/a.yaml"}
		return &Listing{Files: []Listed{{Entry: Entry{Path: "/m/a.yaml"}, Reads: []Outcome{{Pod: p}}}}}
	}
	k := NewKubelet()
	k.Take([]Input{{Relist: listing("default/a")}, {Relist: listing("default/b")}})
	if got := k.Running("default/a"); got != "fixed\x00default/b" {
		t.Errorf("the pod held under its old key runs %q, want it updated in place", got)
	}
	if got := k.Running("default/b"); got != "" {
		t.Errorf("the new key runs %q, want nothing: the merge kept the old name", got)
	}
	if p, ok := k.Clone().Pod("default/a"); !ok || p.Semantic != "default/b" {
		t.Errorf("a clone holds %+v, %v under the old key", p, ok)
	}
}

// A window folded up to the first snapshot with an event a relist still
// to be taken in may come before keeps that snapshot's events and the
// later ones, and starts from the files of the snapshot before: the
// relist, placed before the kept events, reads each file as it was
// there, not as the fold left it.
func TestTimelineFoldToKeepsWhatARelistMayComeBefore(t *testing.T) {
	const a, b = "ns/a", "ns/b"
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a1, b1, b2, b3 := snapFile("m", "a.yaml", a, "v1"), snapFile("m", "b.yaml", b, "w1"), snapFile("m", "b.yaml", b, "w2"), snapFile("m", "b.yaml", b, "w3")
	bad := &types.File{Name: "a.yaml", Path: "m/a.yaml", Err: errors.New("invalid"), Complete: true}
	tl := &Timeline{}
	tl.Add(types.Snapshot{Time: at(0), Path: "m", Relist: true, KubeletRelist: at(0), Files: []*types.File{a1, b1}})
	tl.Add(types.Snapshot{Time: at(100), Path: "m", KubeletRelist: at(0), Events: []types.WatchEvent{{Name: "b.yaml"}}, Files: []*types.File{a1, b2}})
	tl.Add(types.Snapshot{Time: at(210), Path: "m", KubeletRelist: at(0), Events: []types.WatchEvent{{Name: "a.yaml"}}, Files: []*types.File{bad, b2}})
	last := types.Snapshot{Time: at(300), Path: "m", KubeletRelist: at(0), Events: []types.WatchEvent{{Name: "b.yaml"}}, Files: []*types.File{bad, b3}}
	tl.Add(last)
	n := tl.ReadFrom(at(200))
	if in := tl.Inputs()[n]; in.Event == nil || in.Event.Path != "m/a.yaml" {
		t.Fatalf("ReadFrom: input %d is %+v, want the event of a.yaml", n, in)
	}
	tl.FoldTo(n)
	if got := len(tl.Inputs()); got != 2 {
		t.Fatalf("%d inputs kept, want the events of a.yaml and b.yaml", got)
	}
	last.KubeletRelist = at(200)
	tl.Again(last)
	in := tl.Inputs()[0]
	if in.Relist == nil {
		t.Fatalf("first input %+v, want the relist placed before the kept events", in)
	}
	for _, f := range in.Relist.Files {
		want := map[string]string{"m/a.yaml": "v1", "m/b.yaml": "w2"}[f.Path]
		if len(f.Reads) != 1 || f.Reads[0].Pod == nil || f.Reads[0].Pod.Semantic != want {
			t.Errorf("the relist read %s as %+v, want %s", f.Path, f.Reads, want)
		}
	}
}

// A replay of the window from its exploration's start says of every key
// the inputs touch what a replay that narrows the kubelet again says,
// and starts from the state the exploration started from.
func TestReplayFromTheExploredStart(t *testing.T) {
	base := relistedABC()
	inputs := []Input{
		{Event: &WatchEvent{Path: "/m/a.yaml", Type: PodModify}, Reads: []Outcome{{Pod: podV("a", "2")}, {Err: errUnlisted}}},
		{Event: &WatchEvent{Path: "/m/b.yaml", Type: PodDelete}},
	}
	e := ExploreTouched(base, inputs, 16)
	from, states := ReplayEachTouched(base, e, inputs)
	again, statesAgain := ReplayEachTouched(base, &Explored{}, inputs)
	if from != e.from {
		t.Fatal("the replay did not start from the exploration's start")
	}
	for _, key := range []string{"default/a", "default/b"} {
		if from.Running(key) != again.Running(key) {
			t.Errorf("%s before: %q, narrowed again %q", key, from.Running(key), again.Running(key))
		}
		for i := range inputs {
			if got, want := states[i].Running(key), statesAgain[i].Running(key); got != want {
				t.Errorf("%s after input %d: %q, narrowed again %q", key, i, got, want)
			}
		}
	}
	if states[0].Running("default/a") != podV("a", "2").Identity() || states[1].Running("default/b") != "" {
		t.Errorf("the own view: a %q, b %q; want a's second version, b dropped", states[0].Running("default/a"), states[1].Running("default/b"))
	}
}
