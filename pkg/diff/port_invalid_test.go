package diff

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// With no relist of the kubelet's known, the port keeps a pod whose file
// turned invalid published, and looks again a full relist period after
// the file turned: one of the kubelet's relists fell within by then.
func TestPortInvalidFileAsksARecheckAPeriodOn(t *testing.T) {
	opts := testOpts
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

// busyRelist steps the port engine through a busy folder: x.yaml written
// every few dozen milliseconds, so that the window holds more than
// portWindowMax inputs and is folded by force, while web.yaml turns
// invalid just after the folder open of a relist of the kubelet's (at)
// and is fixed before the agent takes that relist in; the last forced
// fold falls between the two writes. It returns the changes said of
// web.yaml.
func busyRelist(t *testing.T, written []types.RelistWrite) []types.Change {
	t.Helper()
	opts := testOpts
	var st State
	var seq uint64
	var said []types.Change
	at := t0.Add(50 * time.Second)
	before := at.Add(-opts.RelistPeriod)
	web := pod("web", "img:1")
	webFile := valid("web.yaml", web, t0)
	xi := 0
	x := func(when time.Time) types.File {
		xi++
		return valid("x.yaml", pod("x", fmt.Sprintf("img:%d", xi)), when)
	}
	xFile := x(t0)
	var last types.Snapshot
	step := func(now, kubelet time.Time, read types.RelistRead, events ...string) {
		t.Helper()
		s := last
		if !kubelet.Equal(last.KubeletRelist) && last.Seq != 0 {
			// The agent hands the snapshot it stepped again, with the
			// relist it took in late.
			s.KubeletRelist, s.KubeletRelistRead = kubelet, read
		} else {
			seq++
			s = types.Snapshot{Time: now, Seq: seq, Relist: seq == 1, Path: "/m", Watch: types.WatchStatus{Up: true},
				KubeletRelist: kubelet, KubeletRelistRead: read, Files: ptrs([]types.File{webFile, xFile})}
			if seq > 1 {
				s.Changed = events
				for _, e := range events {
					s.Events = append(s.Events, types.WatchEvent{Name: e})
				}
			}
		}
		last = s
		chs, recheck := Advance(&st, s, now, opts)
		for !recheck.IsZero() && recheck.Before(now.Add(50*time.Millisecond)) {
			var more []types.Change
			more, recheck = Advance(&st, s, recheck, opts)
			chs = append(chs, more...)
		}
		for _, ch := range chs {
			if ch.Op != "" && ch.File == "web.yaml" {
				said = append(said, ch)
			}
		}
	}
	step(before, before, types.RelistRead{})
	if len(said) != 1 || said[0].Op != types.OpAdd {
		t.Fatalf("the first list said of web.yaml: %+v", said)
	}
	said = nil
	ms := func(n int) time.Time { return at.Add(time.Duration(n) * time.Millisecond) }
	for n := -200; n < 0; n += 50 {
		xFile = x(ms(n))
		step(ms(n), before, types.RelistRead{}, "x.yaml")
	}
	webFile = types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 7: did not find expected ',' or '}'"),
		ChangedAt: ms(10), Complete: true}
	step(ms(10), before, types.RelistRead{}, "web.yaml")
	for n := 25; n < 500; n += 25 {
		xFile = x(ms(n))
		step(ms(n), before, types.RelistRead{}, "x.yaml")
	}
	webFile = valid("web.yaml", web, ms(500))
	step(ms(500), before, types.RelistRead{}, "web.yaml")
	xFile = x(ms(600))
	step(ms(600), before, types.RelistRead{}, "x.yaml")
	read := types.RelistRead{Written: written, Listed: []string{"web.yaml", "x.yaml"}}
	step(ms(750), at, read)
	for n := 800; n < 1300; n += 50 {
		xFile = x(ms(n))
		step(ms(n), at, read, "x.yaml")
	}
	return said
}

// A relist of the kubelet's that opened the folder just before a write
// made its only file invalid read it valid, and kept the pod; the fix
// came before the agent took that relist in. A busy folder folds the
// window by force meanwhile, but not the events that relist may have
// come before: it is placed before the invalid write, and reads the file
// as the folder held it then, so the port says nothing of web.
func TestPortForcedFoldKeepsWhatARelistStillToComeReads(t *testing.T) {
	if said := busyRelist(t, nil); len(said) != 0 {
		t.Fatalf("said of web.yaml %s, want nothing: the relist read it before the invalid write", podOps(said))
	}
}

// The same, but the detector's queue says the invalid write came before
// the relist opened the file: the relist read it invalid and dropped the
// pod, and the fix started it again.
func TestPortForcedFoldKeepsTheWriteARelistRead(t *testing.T) {
	written := []types.RelistWrite{{Name: "web.yaml", Before: true, Since: t0.Add(50*time.Second + time.Millisecond)}}
	said := busyRelist(t, written)
	if podOps(said) != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("said of web.yaml %s, want the REMOVE of the relist and the ADD of the fix", podOps(said))
	}
	rm, add := said[0].Claim, said[1].Claim
	if rm == nil || add == nil || rm.MaySkip || add.With != rm.ID {
		t.Fatalf("claims %+v and %+v, want a REMOVE the kubelet made and the ADD with it", rm, add)
	}
}
