package diff

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/types"
)

// claimOf is the claim of the change of file said in chs, nil for none.
func claimOf(chs []types.Change, file string) *types.Claim {
	for _, ch := range chs {
		if ch.Op != "" && ch.File == file {
			return ch.Claim
		}
	}
	return nil
}

// A busy folder folds the window by force. web.yaml was read while still
// open for writing, so the kubelet may hold its old pod or its new one:
// the fold keeps podwatch's own view, and marks web's key alone. The next
// claim said of web is widened (folded, no bound on the restarts on the
// way) and unmarks it; y.yaml, whose ways agreed, is as tight as before.
func TestPortForcedFoldWidensWhatItDropped(t *testing.T) {
	opts := testOpts
	var st State
	var seq uint64
	at := func(d time.Duration) time.Time { return t0.Add(d * time.Millisecond) }
	step := func(ms time.Duration, events []types.WatchEvent, files ...types.File) []types.Change {
		t.Helper()
		seq++
		s := snap(seq == 1, files...)
		s.Seq, s.Time, s.Events = seq, at(ms), events
		chs, _ := Advance(&st, s, s.Time, opts)
		return chs
	}
	web1, y1 := valid("web.yaml", pod("web", "img:1"), t0), valid("y.yaml", pod("y", "img:1"), t0)
	x := func(i int) types.File {
		return valid("x.yaml", pod("x", fmt.Sprintf("img:%d", i)), at(time.Duration(10*i)))
	}
	if ops := podOps(step(0, nil, web1, x(0), y1)); ops != "ADD web.yaml, ADD x.yaml, ADD y.yaml" {
		t.Fatalf("the list: %q", ops)
	}
	web2 := valid("web.yaml", pod("web", "img:2"), at(10))
	web2.Complete = false
	y2 := valid("y.yaml", pod("y", "img:2"), at(10))
	step(10, []types.WatchEvent{{Name: "web.yaml"}, {Name: "y.yaml"}}, web2, x(0), y2)
	for i := 1; i <= portWindowMax; i++ {
		step(time.Duration(10+10*i), []types.WatchEvent{{Name: "x.yaml"}}, web2, x(i), y2)
	}
	if n := len(st.port.tl.Inputs()); n > portWindowMax {
		t.Fatalf("%d inputs in the window: not folded", n)
	}
	marked := st.port.folded
	if _, ok := marked["kube-system/web-node-1"]; !ok || len(marked) != 1 {
		t.Fatalf("marked %v, want web's key alone", marked)
	}
	web3, y3 := valid("web.yaml", pod("web", "img:3"), at(200)), valid("y.yaml", pod("y", "img:3"), at(200))
	x9 := x(portWindowMax)
	chs := step(200, []types.WatchEvent{{Name: "web.yaml"}, {Name: "y.yaml"}}, web3, x9, y3)
	cl := claimOf(chs, "web.yaml")
	if cl == nil || !cl.Folded || cl.Before.Max != nil || cl.Capped {
		t.Fatalf("web's UPDATE after the fold: %+v, want folded with before unbounded", cl)
	}
	if cl.MaySkip {
		// The dropped way ran img:1, and the write of img:3 reached it
		// too: it makes the change.
		t.Errorf("web's UPDATE: may skip, want not (the write reached the dropped way)")
	}
	if y := claimOf(chs, "y.yaml"); y == nil || y.Folded || !y.Before.Exact(0) {
		t.Errorf("y's UPDATE: %+v, want exact 0 and not folded (its ways agreed)", y)
	}
	if _, ok := st.port.folded["kube-system/web-node-1"]; ok {
		t.Error("web still marked after its claim was said")
	}
	web4 := valid("web.yaml", pod("web", "img:4"), at(300))
	chs = step(300, []types.WatchEvent{{Name: "web.yaml"}}, web4, x9, y3)
	if cl := claimOf(chs, "web.yaml"); cl == nil || cl.Folded || !cl.Before.Exact(0) {
		t.Errorf("web's next UPDATE: %+v, want exact 0 and not folded", cl)
	}
}

// Files that each may give one pod, each read while open for writing,
// have more ways between them than the exploration keeps: the claim of
// the pod's change is capped, with no bound on the restarts on the way.
func TestPortCapIsReached(t *testing.T) {
	opts := testOpts
	var st State
	web1 := valid("web.yaml", pod("web", "img:1"), t0)
	s := snap(true, web1)
	s.Seq = 1
	if chs, _ := Advance(&st, s, t0, opts); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("the list: %v", chs)
	}
	var files []types.File
	var events []types.WatchEvent
	for i := range 7 {
		name := fmt.Sprintf("%c.yaml", 'a'+i)
		f := valid(name, pod("web", fmt.Sprintf("img:%c", 'a'+i)), t0.Add(10*time.Millisecond))
		f.Complete = false
		files, events = append(files, f), append(events, types.WatchEvent{Name: name})
	}
	web2 := valid("web.yaml", pod("web", "img:2"), t0.Add(10*time.Millisecond))
	web2.Complete = false
	files, events = append(files, web2), append(events, types.WatchEvent{Name: "web.yaml"})
	s = snap(false, files...)
	s.Seq, s.Time, s.Events = 2, t0.Add(20*time.Millisecond), events
	chs, _ := Advance(&st, s, s.Time, opts)
	cl := claimOf(chs, "web.yaml")
	if cl == nil || !cl.Capped || cl.Before.Min != 0 || cl.Before.Max != nil {
		t.Fatalf("web's UPDATE: %+v in %q, want capped with before {0, null}", cl, podOps(chs))
	}
	if h := cl.Hedge(); !strings.Contains(h, "more ways than podwatch follows") {
		t.Errorf("a capped claim's hedge %q does not say why", h)
	}
}

// A relist of the kubelet's that lists a file giving a pod whatever it
// read replaces its file source's store: whatever way the kubelet was on,
// it runs what the folder lists, so the window that holds it unmarks
// every key as it folds. A relist that finds no valid file keeps the
// store, and the marks; the key it touched is then marked with nothing
// known of its dropped ways.
func TestPortRelistUnmarksWhatAFoldDropped(t *testing.T) {
	const key = "kube-system/web-node-1"
	web := valid("web.yaml", pod("web", "img:1"), t0)
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("invalid"), ChangedAt: t0.Add(time.Second), Complete: true}
	for _, tc := range []struct {
		name   string
		listed types.File
		marked bool
	}{
		{"a valid file", web, false},
		{"no valid file", bad, true},
	} {
		ps := newPortState()
		s := snap(true, web)
		s.Seq = 1
		ps.tl.Add(s)
		ps.fold(model.ExploreTouched(ps.base, ps.tl.Inputs(), portCap))
		ps.folded = map[string][]string{key: {"an old pod"}}
		next := snap(true, tc.listed)
		next.Seq, next.Time, next.KubeletRelist = 2, t0.Add(30*time.Second), t0.Add(30*time.Second)
		next.Events = []types.WatchEvent{}
		if tc.listed.Err != nil {
			// The watch saw it written: a relist reads what it left.
			next.Events = []types.WatchEvent{{Name: "web.yaml"}}
		}
		ps.tl.Add(next)
		ps.fold(model.ExploreTouched(ps.base, ps.tl.Inputs(), portCap))
		runs, marked := ps.folded[key]
		if marked != tc.marked || runs != nil {
			t.Errorf("%s: marked %v with %q, want marked %v with nothing known", tc.name, marked, runs, tc.marked)
		}
	}
}
