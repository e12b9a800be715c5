package diff

import (
	"io/fs"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// With the kubelet's watch gone with the folder, a change a relist made is
// claimed at a relist though it is said only after the settle delay (a
// change of file alone, an editor's backup of the same content winning
// the key), by when a later relist, which changed nothing, is the
// window's last input.
func TestPortChangeClaimedAtTheRelistThatMadeIt(t *testing.T) {
	opts := testOpts
	opts.RelistPeriod = 2 * time.Second
	web := valid("web.yaml", pod("web", "img:1"), t0.Add(2*time.Second))
	bak := valid("web.yaml.bak", pod("web", "img:1"), t0.Add(3*time.Second))
	var st State
	var seq uint64
	var said []types.Change
	step := func(at time.Duration, relist bool, kr time.Duration, pathErr error, events []types.WatchEvent, files ...*types.File) {
		t.Helper()
		seq++
		now := t0.Add(at)
		snap := types.Snapshot{Time: now, Seq: seq, Relist: relist, Path: "/m", PathErr: pathErr, Watch: types.WatchStatus{Up: pathErr == nil}, Files: files, Events: events}
		if kr >= 0 {
			snap.KubeletRelist = t0.Add(kr)
		}
		chs, _ := Advance(&st, snap, now, opts)
		said = append(said, chs...)
	}
	step(0, true, 0, nil, nil)
	step(100*time.Millisecond, true, 0, fs.ErrNotExist, nil)
	step(2*time.Second, true, 0, nil, nil, &web)
	step(2100*time.Millisecond, false, 2050*time.Millisecond, nil, []types.WatchEvent{}, &web)
	said = nil
	// The backup written; the relist after runs the pod from it, and the
	// UPDATE waits to settle; a relist after that finds nothing more to
	// change.
	step(3*time.Second, false, 2050*time.Millisecond, nil, []types.WatchEvent{{Name: "web.yaml.bak"}}, &web, &bak)
	step(3100*time.Millisecond, false, 3050*time.Millisecond, nil, []types.WatchEvent{}, &web, &bak)
	step(3600*time.Millisecond, false, 3550*time.Millisecond, nil, []types.WatchEvent{}, &web, &bak)
	if got := podOps(said); got != "" {
		t.Fatalf("before the UPDATE settled: %q", got)
	}
	step(4200*time.Millisecond, false, 3550*time.Millisecond, nil, []types.WatchEvent{}, &web, &bak)
	if got := podOps(said); got != "UPDATE web.yaml.bak" {
		t.Fatalf("once settled: %q, want the UPDATE", got)
	}
	if cl := said[len(said)-1].Claim; cl == nil || cl.At != types.ClaimAtRelist || !cl.Estimate {
		t.Errorf("the UPDATE claimed %+v, want at a relist, its time an estimate", cl)
	}
}
