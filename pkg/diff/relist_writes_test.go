package diff

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// midRelist replays a write that lands during a kubelet relist, as
// measured with the real kubelet: the relist opens the folder at at, the
// manifest turns invalid (podwatch reads it 39 ms later), is fixed with
// the same content fixIn later, and the relist is taken in relistLag
// after it was seen, with what the detector saw written during it. It
// returns the ops of each step after the first list, the take-in's last.
func midRelist(t *testing.T, fixIn time.Duration, written []types.RelistWrite) (steps []string, takeIn []types.Change, recheck func() []types.Change) {
	t.Helper()
	return midRelistRead(t, 39*time.Millisecond, fixIn, written, nil)
}

// midRelistRead is midRelist with podwatch reading the invalid write
// readIn after the relist's folder open as the detector dates it, and
// the detector's prior writes.
func midRelistRead(t *testing.T, readIn, fixIn time.Duration, written []types.RelistWrite, prior []types.PriorWrite) (steps []string, takeIn []types.Change, recheck func() []types.Change) {
	t.Helper()
	web := pod("web", "img:1")
	var st State
	at := t0.Add(50 * time.Second)
	before := at.Add(-20 * time.Second) // the relist before, long taken in
	var seq uint64
	var lastSnap types.Snapshot
	step := func(now, kubelet time.Time, written []types.RelistWrite, prior []types.PriorWrite, relist bool, f types.File) []types.Change {
		t.Helper()
		if !relist {
			seq++
		}
		s := types.Snapshot{Time: now, Seq: seq, Relist: relist, Path: "/m", Watch: types.WatchStatus{Up: true},
			KubeletRelist: kubelet, KubeletRelistRead: types.RelistRead{Written: written, Prior: prior}, Files: ptrs([]types.File{f})}
		if !relist {
			s.Changed, s.Events = []string{f.Name}, []types.WatchEvent{{Name: f.Name}}
		}
		if relist {
			s.Seq = seq
		}
		lastSnap = s
		return advanceAll(&st, s, now)
	}
	seq = 1
	if got := podOps(step(t0, before, nil, nil, true, valid("web.yaml", web, t0))); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 8: did not find expected ',' or ']'"),
		ChangedAt: at.Add(readIn), Complete: true}
	steps = append(steps, podOps(step(bad.ChangedAt, before, nil, nil, false, bad)))
	fixed := valid("web.yaml", web, bad.ChangedAt.Add(fixIn))
	last := bad
	if fixIn < relistLagForTest {
		steps = append(steps, podOps(step(fixed.ChangedAt, before, nil, nil, false, fixed)))
		last = fixed
	}
	// The take-in is the snapshot last stepped again, with the relist.
	seq--
	takeIn = step(at.Add(18*time.Millisecond+relistLagForTest), at, written, prior, false, last)
	recheck = func() []types.Change {
		chs, _ := Advance(&st, lastSnap, lastSnap.Time.Add(time.Minute), testOpts)
		return chs
	}
	return steps, takeIn, recheck
}

// relistLagForTest is the agent's relistLag.
const relistLagForTest = 750 * time.Millisecond

// The measured miss: the invalid write landed after the relist's folder
// open and before its open of the file, so the relist read it invalid and
// dropped the pod; the fix half a second later started it again. The
// relist, taken in after the fix, must say both.
func TestKubeletRelistReadAWriteMadeDuringIt(t *testing.T) {
	steps, takeIn, recheck := midRelist(t, 500*time.Millisecond, []types.RelistWrite{{Name: "web.yaml", Before: true}})
	if strings.Join(steps, "|") != "|" {
		t.Fatalf("the invalid write and its fix on the watch: %q, want nothing", steps)
	}
	if got := podOps(takeIn); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("the relist that read the invalid write, taken in after the fix: %q, want REMOVE and ADD\n%+v", got, takeIn)
	}
	if msg := removeMessage(takeIn); !strings.Contains(msg, "at its relist") || strings.Contains(msg, "may") {
		t.Errorf("REMOVE message %q: want it to say the relist read web.yaml invalid, as certain", msg)
	}
	// A recheck of the same snapshot says them once only.
	if got := podOps(recheck()); got != "" {
		t.Errorf("a recheck after the take-in: %q, want nothing", got)
	}
}

// Not fixed before the relist is taken in: the relist that read the
// invalid write drops the pod then, not at the relist after.
func TestKubeletRelistReadAnInvalidWriteMadeDuringIt(t *testing.T) {
	_, takeIn, _ := midRelist(t, 2*time.Second, []types.RelistWrite{{Name: "web.yaml", Before: true}})
	if got := podOps(takeIn); got != "REMOVE web.yaml" {
		t.Fatalf("the relist that read the invalid write: %q, want REMOVE", got)
	}
}

// Written only after the relist's open of it: the relist read the valid
// content, and the pod runs on.
func TestKubeletRelistReadTheFileBeforeAWrite(t *testing.T) {
	_, takeIn, _ := midRelist(t, 500*time.Millisecond, []types.RelistWrite{{Name: "web.yaml", After: true}})
	if got := podOps(takeIn); got != "" {
		t.Fatalf("the relist that read web.yaml before the write: %q, want nothing", got)
	}
}

// Written on both sides of the relist's open: it read one of the writes,
// or a part; podwatch says the restart may not have happened.
func TestKubeletRelistMayHaveReadAWriteMidway(t *testing.T) {
	_, takeIn, _ := midRelist(t, 500*time.Millisecond, []types.RelistWrite{{Name: "web.yaml", Before: true, After: true}})
	if got := podOps(takeIn); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("%q, want REMOVE and ADD", got)
	}
	for _, ch := range takeIn {
		if ch.Op != "" && !saysMaySkip.MatchString(ch.Message) {
			t.Errorf("%s message %q: want it to say the kubelet may skip this restart", ch.Op, ch.Message)
		}
	}
	// Both at that relist, and all or nothing.
	checkClaim(t, takeIn[0], claimWant{op: types.OpRemove, at: types.ClaimAtRelist, skip: true})
	checkClaim(t, takeIn[1], claimWant{op: types.OpAdd, at: types.ClaimAtRelist, skip: true})
	if takeIn[1].Claim.With != takeIn[0].Claim.ID {
		t.Errorf("the ADD goes with %d, want the REMOVE's %d", takeIn[1].Claim.With, takeIn[0].Claim.ID)
	}
}

// The detector read the folder open late, after podwatch read the write
// made during the relist: the write's own bound (the detector's queue
// found empty before it) still places podwatch's read of it.
func TestKubeletRelistReadAWriteSeenBeforeItsFolderOpen(t *testing.T) {
	at := t0.Add(50 * time.Second)
	written := []types.RelistWrite{{Name: "web.yaml", Before: true, Since: at.Add(-20 * time.Millisecond)}}
	_, takeIn, _ := midRelistRead(t, -10*time.Millisecond, 500*time.Millisecond, written, nil)
	if got := podOps(takeIn); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("%q, want REMOVE and ADD", got)
	}
}

// Turned invalid before the relist (podwatch read it so before the
// detector read the folder open) and fixed before the relist was taken
// in: the relist read it invalid and dropped the pod, the fix started it
// again (measured with the real kubelet: invalid-across-relist).
func TestKubeletRelistReadAnInvalidWriteMadeBeforeIt(t *testing.T) {
	_, takeIn, _ := midRelistRead(t, -450*time.Millisecond, 600*time.Millisecond, nil, nil)
	if got := podOps(takeIn); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("%q, want REMOVE and ADD", got)
	}
	if msg := removeMessage(takeIn); !strings.Contains(msg, "at its relist") || strings.Contains(msg, "during") {
		t.Errorf("REMOVE message %q: want the relist that read it, written before it", msg)
	}
}

// Turned invalid just before the relist's folder open, by the detector's
// queue, and read by podwatch only after the open as the detector dates
// it (measured: invalid-across-relist, the REMOVE a relist late): the
// relist read it invalid and dropped the pod, at once if not fixed since,
// and with the fix's ADD if fixed.
func TestKubeletRelistReadAnInvalidWriteMadeJustBeforeIt(t *testing.T) {
	at := t0.Add(50 * time.Second)
	prior := []types.PriorWrite{{Name: "web.yaml", Since: at.Add(-10 * time.Millisecond)}}
	_, takeIn, _ := midRelistRead(t, 5*time.Millisecond, 2*time.Second, nil, prior)
	if got := podOps(takeIn); got != "REMOVE web.yaml" {
		t.Fatalf("not fixed: %q, want REMOVE", got)
	}
	if msg := removeMessage(takeIn); !strings.Contains(msg, "at its relist") {
		t.Errorf("REMOVE message %q: want the relist that read it", msg)
	}
	_, takeIn, _ = midRelistRead(t, 5*time.Millisecond, 500*time.Millisecond, nil, prior)
	if got := podOps(takeIn); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("fixed: %q, want REMOVE and ADD", got)
	}
}

// The kubelet's relist finds the folder's only manifest invalid: it stops
// the pod and keeps its store. A valid file written a millisecond later
// (the judge's barrier, measured) makes its watch send the store again,
// and the pod comes back from its last good parse until the next relist.
// podwatch takes that relist in after the write: it must say the stop and
// the start, not one REMOVE.
func TestEmptyRelistTakenInAfterTheWatchBroughtItBack(t *testing.T) {
	for _, gone := range []bool{false, true} {
		t.Run(map[bool]string{false: "written", true: "written and deleted"}[gone], func(t *testing.T) { emptyRelistBroughtBack(t, gone) })
	}
}

// emptyRelistBroughtBack plays the relist of
// TestEmptyRelistTakenInAfterTheWatchBroughtItBack; gone deletes the
// valid file again before podwatch takes the relist in, which sends the
// store once more.
func emptyRelistBroughtBack(t *testing.T, gone bool) {
	web := pod("web", "img:1")
	var st State
	relistAt := t0.Add(40 * time.Second)
	step := func(now, kubelet time.Time, relist bool, seq uint64, changed []string, files ...types.File) []types.Change {
		t.Helper()
		s := types.Snapshot{Time: now, Seq: seq, Relist: relist, Path: "/m", Watch: types.WatchStatus{Up: true}, KubeletRelist: kubelet, Files: ptrs(files)}
		for _, n := range changed {
			s.Changed, s.Events = append(s.Changed, n), append(s.Events, types.WatchEvent{Name: n, Gone: lookup(s.Files, n) == nil})
		}
		return advanceAll(&st, s, now)
	}
	before := relistAt.Add(-20 * time.Second) // the relist before, long taken in
	if got := podOps(step(t0, before, true, 1, nil, valid("web.yaml", web, t0))); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 8: did not find expected ',' or ']'"),
		ChangedAt: relistAt.Add(-5 * time.Second), Complete: true}
	if got := podOps(step(bad.ChangedAt, before, false, 2, []string{"web.yaml"}, bad)); got != "" {
		t.Fatalf("the invalid write: %q, want nothing before the relist", got)
	}
	barrier := valid("z.yaml", pod("z", "img:1"), relistAt.Add(time.Millisecond))
	if got := podOps(step(barrier.ChangedAt, before, false, 3, []string{"z.yaml"}, bad, barrier)); got != "ADD z.yaml" {
		t.Fatalf("the write after the relist: %q", got)
	}
	files := []types.File{bad, barrier}
	if gone {
		files = files[:1]
		if got := podOps(step(barrier.ChangedAt.Add(100*time.Millisecond), before, false, 4, []string{"z.yaml"}, files...)); got != "REMOVE z.yaml" {
			t.Fatalf("the deletion after the relist: %q", got)
		}
	}
	chs := step(relistAt.Add(750*time.Millisecond), relistAt, false, 4, nil, files...)
	if got := podOps(chs); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("the relist taken in: %q, want the stop and the start the kubelet made\n%+v", got, chs)
	}
	if rm := removeMessage(chs); !strings.HasPrefix(rm, "no valid manifest when the kubelet's relist read the folder") || !strings.Contains(rm, "the change to z.yaml since brought it back") || !chs[0].At.Equal(relistAt) {
		t.Errorf("REMOVE = %q at %v, want it at the relist, saying the change to z.yaml brought the store back", rm, chs[0].At)
	}
	// The pod's UID is the one the kubelet is stopping: it starts it at
	// its housekeeping, which its next relist may come before.
	if add := opMessage(chs, types.OpAdd); !strings.HasPrefix(add, "web.yaml, its last good parse: the kubelet starts the pod again once it has stopped it") || !strings.Contains(add, "unless its next relist drops it first") || !chs[1].MaySkip {
		t.Errorf("ADD = %q (may skip: %v), want it from web.yaml's last good parse, once the stop is done", add, chs[1].MaySkip)
	}
	// The relist's stop and the watch's start were both made: a claim
	// neither may skip, the ADD with the REMOVE.
	checkClaim(t, chs[0], claimWant{op: types.OpRemove, at: types.ClaimAtRelist})
	checkClaim(t, chs[1], claimWant{op: types.OpAdd, at: types.ClaimAtRelist})
	if chs[1].Claim.With != chs[0].Claim.ID {
		t.Errorf("the ADD goes with %d, want the REMOVE's %d", chs[1].Claim.With, chs[0].Claim.ID)
	}
	// The next relist finds no valid file, or z.yaml: web.yaml's pod goes
	// for good.
	next := relistAt.Add(2 * time.Second)
	if got := podOps(step(next.Add(750*time.Millisecond), next, false, 4, nil, files...)); got != "REMOVE web.yaml" {
		t.Fatalf("the next relist: %q", got)
	}
}

// The only manifest turned invalid just after the kubelet's relist read
// it, which the detector read in one batch with the write, so that the
// relist is dated after podwatch read the write: the detector's queue
// says the write came after the relist's read. The relist read the file
// valid and kept the pod; the next one finds no valid file.
func TestKubeletRelistDatedAfterAWriteThatCameAfterItsRead(t *testing.T) {
	web := pod("web", "img:1")
	var st State
	start := t0.Add(-20 * time.Second)
	step := func(now, relist time.Time, written []types.RelistWrite, seq uint64, f types.File, changed bool) []types.Change {
		t.Helper()
		s := types.Snapshot{Time: now, Seq: seq, Path: "/m", Watch: types.WatchStatus{Up: true},
			KubeletRelist: relist, KubeletRelistRead: types.RelistRead{Written: written}, Files: ptrs([]types.File{f})}
		if changed {
			s.Changed, s.Events = []string{f.Name}, []types.WatchEvent{{Name: f.Name}}
		} else if seq == 1 {
			s.Relist = true
		}
		return advanceAll(&st, s, now)
	}
	if got := podOps(step(start, start, nil, 1, valid("web.yaml", web, start), false)); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 7: did not find expected ',' or '}'"),
		ChangedAt: t0.Add(5 * time.Millisecond), Complete: true}
	if got := podOps(step(bad.ChangedAt, start, nil, 2, bad, true)); got != "" {
		t.Fatalf("the invalid write on the watch: %q, want nothing", got)
	}
	at := t0.Add(10 * time.Millisecond) // the relist, dated by the batch that held the write too
	after := []types.RelistWrite{{Name: "web.yaml", After: true}}
	if got := podOps(step(at.Add(relistLagForTest), at, after, 2, bad, false)); got != "" {
		t.Errorf("the relist that read web.yaml before the write: %q, want nothing", got)
	}
	next := at.Add(2 * time.Second)
	if got := podOps(step(next.Add(relistLagForTest), next, nil, 2, bad, false)); got != "REMOVE web.yaml" {
		t.Errorf("the next relist: %q, want REMOVE web.yaml", got)
	}
}

// Turned invalid after a relist's folder open but before podwatch took
// that relist in, and fixed after the next relist's open but before
// podwatch took that one in (measured with the real kubelet:
// invalid-across-relist, podwatch silent). The first take-in must keep
// the invalid content as the watch's, after that relist, so that the
// second knows its relist read it: it dropped the pod, and the fix
// started it again.
func TestKubeletRelistReadAWriteTakenInWithTheRelistBefore(t *testing.T) {
	web := pod("web", "img:1")
	var st State
	atN := t0.Add(50 * time.Second)
	atNext := atN.Add(2 * time.Second)
	seq := uint64(1)
	step := func(now, kubelet time.Time, relist, again bool, f types.File) []types.Change {
		t.Helper()
		if !relist && !again {
			seq++
		}
		s := types.Snapshot{Time: now, Seq: seq, Relist: relist, Path: "/m", Watch: types.WatchStatus{Up: true},
			KubeletRelist: kubelet, Files: ptrs([]types.File{f})}
		if !relist {
			s.Changed, s.Events = []string{f.Name}, []types.WatchEvent{{Name: f.Name}}
		}
		return advanceAll(&st, s, now)
	}
	before := atN.Add(-2 * time.Second)
	if got := podOps(step(t0, before, true, false, valid("web.yaml", web, t0))); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 8: did not find expected ',' or ']'"),
		ChangedAt: atN.Add(500 * time.Millisecond), Complete: true}
	if got := podOps(step(bad.ChangedAt, before, false, false, bad)); got != "" {
		t.Fatalf("the invalid write on the watch: %q, want nothing", got)
	}
	if got := podOps(step(atN.Add(relistLagForTest), atN, false, true, bad)); got != "" {
		t.Fatalf("the relist before the invalid write, taken in: %q, want nothing", got)
	}
	fixed := valid("web.yaml", web, atNext.Add(126*time.Millisecond))
	if got := podOps(step(fixed.ChangedAt, atN, false, false, fixed)); got != "" {
		t.Fatalf("the fix on the watch: %q, want nothing", got)
	}
	takeIn := step(atNext.Add(relistLagForTest), atNext, false, true, fixed)
	if got := podOps(takeIn); got != "REMOVE web.yaml, ADD web.yaml" {
		t.Fatalf("the relist that read the invalid write, taken in after the fix: %q, want REMOVE and ADD", got)
	}
	if msg := removeMessage(takeIn); !strings.Contains(msg, "at its relist") {
		t.Errorf("REMOVE message %q: want the relist that read it", msg)
	}
}

// An invalid write on both sides of the relist's read of the file, not
// fixed before the relist is taken in: that relist may have read the
// content from before the write (the real kubelet, a clean-clone CI run's
// invalid-across-relist: its next relist stopped the pod), so the REMOVE
// names both relists and says the kubelet may skip it, as does the ADD of
// a fix before the next relist. That relist, taken in, says nothing more.
func TestKubeletRelistMayHaveKeptAPodForAnInvalidWrite(t *testing.T) {
	// The only manifest, its relist the empty one (the kubelet keeps its
	// store), or one of two; then fixed, or, still invalid, another file
	// written, which sends an empty relist's kept store again.
	for _, tc := range []struct {
		name      string
		alone     bool
		then      string
		thenWants string
	}{
		{"alone, fixed", true, "web.yaml", "ADD web.yaml"},
		{"with another, fixed", false, "web.yaml", "ADD web.yaml"},
		{"alone, another file written", true, "z.yaml", "ADD web.yaml, ADD z.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) { mayHaveKeptAPod(t, tc.alone, tc.then, tc.thenWants) })
	}
}

// mayHaveKeptAPod plays TestKubeletRelistMayHaveKeptAPodForAnInvalidWrite:
// alone, web.yaml is the folder's only manifest; then names the file
// written valid after the relist is taken in, and thenWants the ops that
// write is said with.
func mayHaveKeptAPod(t *testing.T, alone bool, then, thenWants string) {
	web := pod("web", "img:1")
	var st State
	at := t0.Add(50 * time.Second)
	both := []types.RelistWrite{{Name: "web.yaml", Before: true, After: true}}
	other := valid("other.yaml", pod("other", "img:1"), t0) // the relist is not an empty one
	step := func(seq uint64, now, kubelet time.Time, written []types.RelistWrite, changed string, files ...types.File) []types.Change {
		t.Helper()
		if !alone {
			files = append([]types.File{other}, files...)
		}
		s := types.Snapshot{Time: now, Seq: seq, Relist: seq == 1, Path: "/m", Watch: types.WatchStatus{Up: true},
			KubeletRelist: kubelet, KubeletRelistRead: types.RelistRead{Written: written}, Files: ptrs(files)}
		if changed != "" {
			s.Changed, s.Events = []string{changed}, []types.WatchEvent{{Name: changed}}
		}
		return advanceAll(&st, s, now)
	}
	before := at.Add(-20 * time.Second)
	want := "ADD other.yaml, ADD web.yaml"
	if alone {
		want = "ADD web.yaml"
	}
	if got := podOps(step(1, t0, before, nil, "", valid("web.yaml", web, t0))); got != want {
		t.Fatalf("first list: %q", got)
	}
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("yaml: line 7: did not find expected ',' or '}'"),
		ChangedAt: at.Add(14 * time.Millisecond), Complete: true}
	if got := podOps(step(2, bad.ChangedAt, before, nil, "web.yaml", bad)); got != "" {
		t.Fatalf("the invalid write on the watch: %q, want nothing", got)
	}
	takeIn := step(2, at.Add(relistLagForTest), at, both, "", bad)
	if got := podOps(takeIn); got != "REMOVE web.yaml" {
		t.Fatalf("the relist taken in: %q, want REMOVE", got)
	}
	if ch := podChange(takeIn); !ch.MaySkip || !strings.Contains(ch.Detail, "at its next relist instead") || !strings.Contains(ch.Message, "or stops it at its next") || !saysMaySkip.MatchString(ch.Message) {
		t.Errorf("REMOVE (may skip: %v) %q: want it to say the next relist may be the one, and that the kubelet may skip it", ch.MaySkip, ch.Message)
	}
	rm := podChange(takeIn)
	checkClaim(t, rm, claimWant{op: types.OpRemove, at: types.ClaimAtRelist, skip: true})
	files := []types.File{valid("web.yaml", web, at.Add(2*time.Second))}
	if then != "web.yaml" {
		files = []types.File{bad, valid(then, pod("z", "img:1"), at.Add(2*time.Second))}
	}
	chs := step(3, at.Add(2*time.Second), at, nil, then, files...)
	if got := podOps(chs); got != thenWants {
		t.Fatalf("%s written on the watch: %q, want %q", then, got, thenWants)
	}
	for _, ch := range chs {
		if ch.File == "web.yaml" && (!ch.MaySkip || !strings.Contains(ch.Detail, "never stopped the pod") || !saysMaySkip.MatchString(ch.Message)) {
			t.Errorf("ADD (may skip: %v) %q: want it to say the kubelet may never have stopped the pod", ch.MaySkip, ch.Message)
		}
		if ch.File == "web.yaml" && (ch.Claim == nil || !ch.Claim.MaySkip || ch.Claim.With != rm.Claim.ID) {
			t.Errorf("ADD claims %+v, want it to go with the REMOVE's %d, or neither", ch.Claim, rm.Claim.ID)
		}
	}
	if got := podOps(step(3, at.Add(20*time.Second+relistLagForTest), at.Add(20*time.Second), nil, "", files...)); then == "web.yaml" && got != "" {
		t.Errorf("the next relist taken in: %q, want nothing", got)
	}
}
