package diff

import (
	"errors"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// With no relist of the kubelet's known, the port keeps a pod whose file
// turned invalid published, and looks again a full relist period after
// the file turned: one of the kubelet's relists fell within by then.
func TestPortInvalidFileAsksARecheckAPeriodOn(t *testing.T) {
	opts := testOpts
	opts.Engine = EnginePort
	other := valid("b.yaml", pod("b", "img:1"), t0)
	_, st, recheck := Compute(State{}, snap(true, valid("a.yaml", pod("a", "img:1"), t0), other), t0.Add(time.Hour), opts)
	if !recheck.IsZero() {
		t.Fatalf("the list left a recheck at %v", recheck)
	}
	bad := types.File{Name: "a.yaml", Err: errors.New("line 7: spec.containers[0].image: Required value"), ChangedAt: t0.Add(10 * time.Second)}
	s := snap(false, bad, other)
	chs, st, recheck := Compute(st, s, t0.Add(10*time.Second), opts)
	if len(chs) != 0 || recheck.IsZero() {
		t.Fatalf("before settling: [%s] recheck %v", reasons(chs), recheck)
	}
	chs, st, recheck = Compute(st, s, recheck, opts)
	mustOne(t, chs, types.ReasonInvalid)
	if want := t0.Add(10*time.Second + opts.RelistPeriod); !recheck.Equal(want) || len(st.Pods) != 2 {
		t.Fatalf("once said invalid: recheck %v, want %v; pods %v", recheck, want, st.Pods)
	}
}

// A relist of the kubelet's that may have read the folder's only file
// while it was being written invalid may have kept the pod: the port
// says the REMOVE the kubelet may skip, and the ADD at the fix, a step
// later, goes with it (all or nothing), by the REMOVE's claim ID.
func TestPortFixAfterARacedDropGoesWithItsRemove(t *testing.T) {
	opts := testOpts
	opts.Engine = EnginePort
	var st State
	step := func(seq uint64, now, kubelet time.Time, written []types.RelistWrite, changed string, files ...types.File) []types.Change {
		t.Helper()
		s := types.Snapshot{Time: now, Seq: seq, Relist: seq == 1, Path: "/m", Watch: types.WatchStatus{Up: true},
			KubeletRelist: kubelet, KubeletRelistRead: types.RelistRead{Written: written}, Files: ptrs(files)}
		if changed != "" {
			s.Changed, s.Events = []string{changed}, []types.WatchEvent{{Name: changed}}
		}
		chs, recheck := Advance(&st, s, now, opts)
		for !recheck.IsZero() {
			var more []types.Change
			more, recheck = Advance(&st, s, recheck, opts)
			chs = append(chs, more...)
		}
		return chs
	}
	web := pod("web", "img:1")
	at := t0.Add(50 * time.Second)
	before := at.Add(-20 * time.Second)
	if got := podOps(step(1, t0, before, nil, "", valid("web.yaml", web, t0))); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 7: did not find expected ',' or '}'"),
		ChangedAt: at.Add(14 * time.Millisecond), Complete: true}
	step(2, bad.ChangedAt, before, nil, "web.yaml", bad)
	both := []types.RelistWrite{{Name: "web.yaml", Before: true, After: true}}
	rm := podChange(step(2, at.Add(relistLagForTest), at, both, "", bad))
	if rm.Op != types.OpRemove || rm.Claim == nil || !rm.Claim.MaySkip {
		t.Fatalf("the relist taken in: %+v, want a REMOVE the kubelet may skip", rm)
	}
	add := podChange(step(3, at.Add(2*time.Second), at, nil, "web.yaml", valid("web.yaml", web, at.Add(2*time.Second))))
	if add.Op != types.OpAdd || add.Claim == nil || !add.Claim.MaySkip || add.Claim.With != rm.Claim.ID {
		t.Fatalf("the fix: %s claims %+v, want an ADD the kubelet may skip with the REMOVE's %d", add.Op, add.Claim, rm.Claim.ID)
	}
}
