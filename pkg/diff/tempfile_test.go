package diff

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// sedSteps feeds numbered snapshots at the times given, one Advance each,
// so that a test sees what is said before a recheck comes due.
type sedSteps struct {
	t   *testing.T
	st  State
	seq uint64
}

// opts are the options each step takes.
func (q *sedSteps) opts() Options {
	return testOpts
}

// at takes in a snapshot of files at now, made by events (Changed being
// the names they touch), and returns what Advance says and its recheck.
func (q *sedSteps) at(now time.Time, relist bool, events []types.WatchEvent, files ...types.File) ([]types.Change, time.Time) {
	q.t.Helper()
	q.seq++
	snap := types.Snapshot{Time: now, Seq: q.seq, Relist: relist, Path: "/m", Watch: types.WatchStatus{Up: true}, Files: ptrs(files)}
	if !relist {
		snap.Events = events
		snap.Changed = []string{}
		for _, ev := range events {
			snap.Changed = append(snap.Changed, ev.Name)
		}
		slices.Sort(snap.Changed)
		snap.Changed = slices.Compact(snap.Changed)
	}
	return Advance(&q.st, snap, now, q.opts())
}

// rest runs the rechecks of the last snapshot until none is asked for.
func (q *sedSteps) rest(now, recheck time.Time, files ...types.File) []types.Change {
	q.t.Helper()
	snap := types.Snapshot{Time: now, Seq: q.seq, Path: "/m", Watch: types.WatchStatus{Up: true}, Files: ptrs(files), Changed: []string{}, Events: []types.WatchEvent{}}
	var chs []types.Change
	for !recheck.IsZero() {
		var more []types.Change
		more, recheck = Advance(&q.st, snap, recheck, q.opts())
		chs = append(chs, more...)
	}
	return chs
}

// sed -i writes sedXXXXXX beside the manifest and renames it over it. The
// kubelet reads the temp file if it takes in one of its events before the
// rename: then it runs the pod from it, drops it as the name goes, and
// starts it from web.yaml (two restarts); otherwise it restarts the pod
// once. podwatch cannot tell which, however the events fall into its
// snapshots: it says one UPDATE that may be preceded by one more restart,
// naming the temp file, and never the two restarts as certain.
func TestSedTempFile(t *testing.T) {
	const tmp = "sedQ3xZ9a"
	v1f := sedV1()
	start := func(t *testing.T) *sedSteps {
		q := &sedSteps{t: t}
		if chs, _ := q.at(t0, true, nil, v1f); podOps(chs) != "ADD web.yaml" {
			t.Fatalf("first list: %q", podOps(chs))
		}
		return q
	}
	// oneUpdate checks chs hold just the one UPDATE from web.yaml, img:2,
	// that names the temp file as a maybe.
	oneUpdate := func(t *testing.T, what string, chs []types.Change) {
		t.Helper()
		if got := podOps(chs); got != "UPDATE web.yaml" {
			t.Fatalf("%s: %q, want one UPDATE web.yaml\n%+v", what, got, chs)
		}
		m := updateMessage(chs)
		// The port claims the temp file as a restart the kubelet
		// may have made on the way, naming it.
		up := opChange(t, chs, types.OpUpdate)
		checkClaim(t, up, claimWant{op: types.OpUpdate, at: types.ClaimAtWatch, max: 1})
		if !strings.Contains(m, "image 1 → 2") || strings.Contains(m, "now from") || !slices.Contains(up.Claim.Via, tmp) {
			t.Fatalf("%s: %q via %v, want image 1 → 2 by way of %s", what, m, up.Claim.Via, tmp)
		}
	}

	t.Run("one snapshot", func(t *testing.T) {
		q := start(t)
		web := valid("web.yaml", pod("web", "img:2"), saveAt(20))
		chs, recheck := q.at(saveAt(20), false, []types.WatchEvent{evWrote(tmp), evGone(tmp), evWrote("web.yaml")}, web)
		chs = append(chs, q.rest(saveAt(20), recheck, web)...)
		oneUpdate(t, "the temp file unread", chs)
	})

	t.Run("temp file read whole, renamed in the next", func(t *testing.T) {
		q := start(t)
		sed := valid(tmp, pod("web", "img:2"), saveAt(0))
		chs, recheck := q.at(saveAt(0), false, []types.WatchEvent{evWrote(tmp)}, sed, v1f)
		if len(chs) != 0 || recheck.IsZero() {
			t.Fatalf("the temp file new and whole: %q, recheck %v; want the UPDATE held", podOps(chs), recheck)
		}
		web := valid("web.yaml", pod("web", "img:2"), saveAt(15))
		chs, recheck = q.at(saveAt(15), false, []types.WatchEvent{evGone(tmp), evWrote("web.yaml")}, web)
		chs = append(chs, q.rest(saveAt(15), recheck, web)...)
		oneUpdate(t, "renamed", chs)
	})

	t.Run("temp file read mid-write, renamed in the next", func(t *testing.T) {
		q := start(t)
		half := types.File{Name: tmp, Path: "/m/" + tmp, Err: errString("yaml: line 4: did not find expected key"), ChangedAt: saveAt(0)}
		if chs, _ := q.at(saveAt(0), false, []types.WatchEvent{evWrote(tmp)}, half, v1f); podOps(chs) != "" {
			t.Fatalf("half a temp file: %q", podOps(chs))
		}
		web := valid("web.yaml", pod("web", "img:2"), saveAt(15))
		chs, recheck := q.at(saveAt(15), false, []types.WatchEvent{evGone(tmp), evWrote("web.yaml")}, web)
		chs = append(chs, q.rest(saveAt(15), recheck, web)...)
		oneUpdate(t, "renamed after a partial read", chs)
	})

	t.Run("the rename's two events in two snapshots", func(t *testing.T) {
		q := start(t)
		sed := valid(tmp, pod("web", "img:2"), saveAt(0))
		q.at(saveAt(0), false, []types.WatchEvent{evWrote(tmp)}, sed, v1f)
		chs, _ := q.at(saveAt(10), false, []types.WatchEvent{evGone(tmp)}, v1f)
		if len(chs) != 0 {
			t.Fatalf("the temp file gone: %q, want the REMOVE held: the kubelet may never have read it\n%+v", podOps(chs), chs)
		}
		web := valid("web.yaml", pod("web", "img:2"), saveAt(12))
		chs, recheck := q.at(saveAt(12), false, []types.WatchEvent{evWrote("web.yaml")}, web)
		chs = append(chs, q.rest(saveAt(12), recheck, web)...)
		oneUpdate(t, "moved in", chs)
		// The relist finds web.yaml alone: nothing more.
		if chs, _ := q.at(saveAt(20_000), true, nil, web); len(chs) != 0 {
			t.Fatalf("the relist after: %q", podOps(chs))
		}
	})

	t.Run("gone unread, the target moved in next", func(t *testing.T) {
		q := start(t)
		q.at(saveAt(0), false, []types.WatchEvent{evWrote(tmp)}, v1f)
		q.at(saveAt(5), false, []types.WatchEvent{evGone(tmp)}, v1f)
		web := valid("web.yaml", pod("web", "img:2"), saveAt(6))
		chs, recheck := q.at(saveAt(6), false, []types.WatchEvent{evWrote("web.yaml")}, web)
		chs = append(chs, q.rest(saveAt(6), recheck, web)...)
		oneUpdate(t, "moved in after the unread name went", chs)
	})

	// A new file that takes the pod and goes, with nothing to give the
	// pod back: the REMOVE is said once it settled, as an if. If the
	// kubelet read the file first, it also ran its pod on the way.
	t.Run("gone for good", func(t *testing.T) {
		q := start(t)
		sed := valid(tmp, pod("web", "img:2"), saveAt(0))
		q.at(saveAt(0), false, []types.WatchEvent{evWrote(tmp)}, sed, v1f)
		chs, recheck := q.at(saveAt(10), false, []types.WatchEvent{evGone(tmp)}, v1f)
		chs = append(chs, q.rest(saveAt(10), recheck, v1f)...)
		// The port: if the kubelet read the temp file, it ran it and
		// its going drops the pod; if not, neither: a REMOVE with the
		// one restart before it, all of which it may skip.
		if podOps(chs) != "REMOVE "+tmp {
			t.Fatalf("the temp file gone for good: %q", podOps(chs))
		}
		checkClaim(t, chs[0], claimWant{op: types.OpRemove, at: types.ClaimAtWatch, min: 1, max: 1, skip: true})
	})

	// A relist while the new file's UPDATE waits: the file outlived the
	// kubelet's read, which ran its pod until this relist took the winner
	// back; both restarts are said.
	t.Run("a relist while held", func(t *testing.T) { relistWhileHeld(start(t)) })

	// A new file that stays past the settle delay: the kubelet read it,
	// and the UPDATE to it, and the one back, are certain.
	t.Run("a new file that stays", func(t *testing.T) {
		q := start(t)
		bak := valid("a.yaml", pod("web", "img:2"), saveAt(0))
		chs, recheck := q.at(saveAt(0), false, []types.WatchEvent{evWrote("a.yaml")}, bak, v1f)
		chs = append(chs, q.rest(saveAt(0), recheck, bak, v1f)...)
		if m := updateMessage(chs); podOps(chs) != "UPDATE a.yaml" || !strings.Contains(m, "now from a.yaml (was web.yaml)") || strings.Contains(m, "may have") {
			t.Fatalf("a new file that stays: %q %q", podOps(chs), m)
		}
		chs, recheck = q.at(saveAt(5000), false, []types.WatchEvent{evGone("a.yaml")}, v1f)
		chs = append(chs, q.rest(saveAt(5000), recheck, v1f)...)
		if m := removeMessage(chs); podOps(chs) != "REMOVE a.yaml" || strings.Contains(m, "if the kubelet") {
			t.Fatalf("the new file deleted later: %q %q", podOps(chs), m)
		}
	})
}

// sedV1 is web.yaml as the sed tests start with it.
func sedV1() types.File { return valid("web.yaml", pod("web", "img:1"), t0) }

// relistWhileHeld: a relist while the new file's UPDATE waits. The file
// outlived the kubelet's read, which ran its pod until this relist took
// the winner back; both restarts are said.
func relistWhileHeld(q *sedSteps) {
	t := q.t
	t.Helper()
	early := valid("a.yaml", pod("web", "img:2"), saveAt(0))
	if chs, _ := q.at(saveAt(0), false, []types.WatchEvent{evWrote("a.yaml")}, early, sedV1()); len(chs) != 0 {
		t.Fatalf("the new file: %q, want it held", podOps(chs))
	}
	chs, recheck := q.at(saveAt(500), true, nil, early, sedV1())
	chs = append(chs, q.rest(saveAt(500), recheck, early, sedV1())...)
	if got := podOps(chs); got != "UPDATE a.yaml, UPDATE web.yaml" || !strings.Contains(chs[1].Message, "now from web.yaml (was a.yaml)") {
		t.Fatalf("the relist: %q, want the held UPDATE and the one back\n%+v", got, chs)
	}
}

// The port says the excursion a relist ended while its UPDATE waited as
// the two UPDATEs, not as a relist that went back between watch events
// said as one: the pod it took back from was never said.
func TestPortRelistWhileHeldSaysTheExcursion(t *testing.T) {
	q := &sedSteps{t: t}
	if chs, _ := q.at(t0, true, nil, sedV1()); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("first list: %q", podOps(chs))
	}
	relistWhileHeld(q)
}

type errString string

func (e errString) Error() string { return string(e) }
