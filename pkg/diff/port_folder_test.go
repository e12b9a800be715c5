package diff

import (
	"io/fs"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A relist of a folder gone cannot be seen: one comes within a period,
// before the folder is back, in podwatch's own view.
func TestPortFolderGoneRelistUnseen(t *testing.T) {
	opts := testOpts
	web := valid("web.yaml", pod("web", "img:1"), t0)
	var st State
	s := types.Snapshot{Time: t0, Seq: 1, Relist: true, Path: "/m", Watch: types.WatchStatus{Up: true}, Files: []*types.File{&web}, KubeletRelist: t0}
	if chs, _ := Advance(&st, s, t0, opts); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("first list: %q", podOps(chs))
	}
	at := t0.Add(5 * time.Second)
	s = types.Snapshot{Time: at, Seq: 2, Relist: true, Path: "/m", PathErr: fs.ErrNotExist, KubeletRelist: t0}
	chs, recheck := Advance(&st, s, at, opts)
	if len(chs) != 0 || recheck.IsZero() {
		t.Fatalf("the folder just gone: %q, recheck %v; want the REMOVE waiting to settle", podOps(chs), recheck)
	}
	chs, _ = Advance(&st, s, recheck, opts)
	if podOps(chs) != "REMOVE web.yaml" {
		t.Fatalf("the folder gone: %q, want the REMOVE of the relist that finds it missing", podOps(chs))
	}
	for _, ch := range chs {
		if ch.Op != "" && (ch.Claim.At != types.ClaimAtRelist || !ch.Claim.Estimate) {
			t.Errorf("claimed %+v, want at a relist, an estimate", ch.Claim)
		}
	}
	at = t0.Add(6 * time.Second)
	s = types.Snapshot{Time: at, Seq: 3, Relist: true, Extra: true, Path: "/m", Watch: types.WatchStatus{Up: true}, Files: []*types.File{&web}, KubeletRelist: t0}
	if chs, _ := Advance(&st, s, at, opts); podOps(chs) != "" {
		t.Fatalf("the folder back: %q, want nothing before the kubelet's relist", podOps(chs))
	}
	at = t0.Add(7 * time.Second)
	s = types.Snapshot{Time: at, Seq: 4, Path: "/m", Watch: types.WatchStatus{Up: true}, Files: []*types.File{&web}, KubeletRelist: at, Events: []types.WatchEvent{}}
	if chs, _ := Advance(&st, s, at, opts); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("the relist after: %q, want the ADD", podOps(chs))
	}
}

// Once the folder went away, the port's kubelet has no watch: its
// doWatch ended with the folder and is not started again, so the pods go,
// come back and change at its relists alone, each claimed there.
func TestPortWatchEndsWithTheFolder(t *testing.T) {
	opts := testOpts
	v1f := valid("web.yaml", pod("web", "img:1"), t0)
	v2f := valid("web.yaml", pod("web", "img:2"), t0.Add(20*time.Second))
	var st State
	seenRelist := false // a relist the detector saw, in a snapshot of the watch
	step := func(seq uint64, relist bool, pathErr error, changed []string, files ...*types.File) []types.Change {
		t.Helper()
		now := t0.Add(time.Duration(seq) * 5 * time.Second)
		snap := types.Snapshot{Time: now, Seq: seq, Relist: relist, Path: "/m", PathErr: pathErr, Watch: types.WatchStatus{Up: pathErr == nil}, Files: files}
		if relist {
			snap.KubeletRelist = now
		} else {
			snap.Changed = changed
		}
		if seenRelist {
			snap.KubeletRelist = now
		}
		var all []types.Change
		chs, recheck := Advance(&st, snap, now, opts)
		all = append(all, chs...)
		for !recheck.IsZero() {
			chs, recheck = Advance(&st, snap, recheck, opts)
			all = append(all, chs...)
		}
		return all
	}
	atRelist := func(what string, chs []types.Change, want string) {
		t.Helper()
		if got := podOps(chs); got != want {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
		for _, ch := range chs {
			if ch.Op == "" {
				continue
			}
			if ch.Claim == nil || ch.Claim.At != types.ClaimAtRelist {
				t.Fatalf("%s: %s claimed %+v, want at a relist (%+v)", what, ch.Op, ch.Claim, ch)
			}
		}
	}
	if got := podOps(step(1, true, nil, nil, &v1f)); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	atRelist("the folder gone", step(2, true, fs.ErrNotExist, nil), "REMOVE web.yaml")
	if !st.port.tl.Unwatched() {
		t.Fatal("the kubelet's watch did not end with the folder")
	}
	// The folder made again and the file written: podwatch's watch sees
	// it, the kubelet's does not.
	if chs := step(3, false, nil, []string{"web.yaml"}, &v1f); len(chs) != 0 {
		t.Fatalf("the file back with the kubelet's watch gone: %+v, want nothing before its relist", chs)
	}
	atRelist("the relist after the folder came back", step(4, true, nil, nil, &v1f), "ADD web.yaml")
	if chs := step(5, false, nil, []string{"web.yaml"}, &v2f); len(chs) != 0 {
		t.Fatalf("an edit with the kubelet's watch gone: %+v, want nothing before its relist", chs)
	}
	atRelist("the relist after the edit", step(6, true, nil, nil, &v2f), "UPDATE web.yaml")
	// Removed as a relist is seen: it may have read the file before; the
	// next relist drops the pod if that one did not.
	seenRelist = true
	gone := step(7, false, nil, []string{"web.yaml"})
	seenRelist = false
	gone = append(gone, step(8, true, nil, nil)...)
	atRelist("the file removed at a relist", gone, "REMOVE web.yaml")
}
