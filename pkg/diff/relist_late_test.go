package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// kubeletStep steps a State through a snapshot of /m: seq 1 is podwatch's
// first list, each later one carries the names changed; kubelet is the
// kubelet's relist the diff is told of, now when the step runs.
type kubeletStep func(seq uint64, kubelet, now time.Time, changed []string, files ...*types.File) []types.Change

func kubeletSteps(t *testing.T, st *State) kubeletStep {
	return func(seq uint64, kubelet, now time.Time, changed []string, files ...*types.File) []types.Change {
		t.Helper()
		snap := types.Snapshot{Time: now, Seq: seq, Relist: seq == 1, Path: "/m", Watch: types.WatchStatus{Up: true}, KubeletRelist: kubelet, Files: files}
		if seq != 1 {
			snap.Changed = changed
		}
		return advanceAll(st, snap, now)
	}
}

// bakWinsThenWritten has podwatch list web.yaml and web.yaml.bak, which
// wins, then take web.yaml written at t0+second (the kubelet's relist
// taken in at +1s). It returns the steps, the .bak, that write and
// web.yaml's next version, written at t0+third.
func bakWinsThenWritten(t *testing.T, st *State, second, third time.Duration) (step kubeletStep, bak, v2, v3 types.File) {
	t.Helper()
	bak = valid("web.yaml.bak", pod("web", "img:bak"), t0)
	v1 := valid("web.yaml", pod("web", "img:1"), t0)
	v2 = valid("web.yaml", pod("web", "img:2"), t0.Add(second))
	v3 = valid("web.yaml", pod("web", "img:3"), t0.Add(third))
	step = kubeletSteps(t, st)
	if got := podOps(step(1, t0.Add(time.Second), t0.Add(time.Second), nil, &v1, &bak)); got != "ADD web.yaml.bak" {
		t.Fatalf("first list: %q", got)
	}
	if got := podOps(step(2, t0.Add(time.Second), v2.ChangedAt, []string{"web.yaml"}, &v2, &bak)); got != "UPDATE web.yaml" {
		t.Fatalf("web.yaml written: %q", got)
	}
	return step, bak, v2, v3
}

// The real kubelet, on a quiet node (the judge's shadowed-edited-quiet):
// web.yaml written while web.yaml.bak wins, the kubelet's relist a second
// later takes the .bak back, and web.yaml is written again 130 ms after
// that relist, before podwatch takes it in. The kubelet restarted the pod
// three times (web.yaml, the .bak, web.yaml); podwatch said the second
// write as a restart from the first, and says the relist's own when it
// takes the relist in, leaving the published pod as the watch left it.
func TestKubeletRelistSeenLateWentBackInBetween(t *testing.T) {
	var st State
	step, bak, _, v3 := bakWinsThenWritten(t, &st, 10*time.Second, 12*time.Second)
	// The kubelet's relist at +11s, seen and not yet taken in, then the
	// second write at +12s.
	if got := podOps(step(3, t0.Add(time.Second), v3.ChangedAt, []string{"web.yaml"}, &v3, &bak)); got != "UPDATE web.yaml" {
		t.Fatalf("web.yaml written again: %q", got)
	}
	pub := st.Pods["kube-system/web-node-1"]
	chs := step(3, t0.Add(11*time.Second), v3.ChangedAt.Add(time.Second), nil, &v3, &bak)
	if len(chs) != 1 || chs[0].Reason != types.ReasonUpdated || chs[0].Op != "" || chs[0].File != "web.yaml.bak" ||
		!chs[0].At.Equal(t0.Add(11*time.Second)) || !strings.HasPrefix(chs[0].Message, "web.yaml.bak: the kubelet's relist ran the pod from it again") || !strings.Contains(chs[0].Detail, "ran pod kube-system/web-node-1 from web.yaml.bak again") {
		t.Fatalf("the relist between the writes, taken in: %+v, want one UPDATE event of web.yaml.bak at it, no op", chs)
	}
	// No change of the published pod, but an UPDATE the kubelet made.
	checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtRelist})
	if got := st.Pods["kube-system/web-node-1"]; got.File != pub.File || got.Hash != pub.Hash {
		t.Errorf("published pod %s %s after it, want it left at %s %s", got.File, got.Hash, pub.File, pub.Hash)
	}
	// A recheck steps the same snapshot again: said once.
	if chs, _ := Advance(&st, types.Snapshot{Time: v3.ChangedAt.Add(time.Second), Seq: 3, Path: "/m", Watch: types.WatchStatus{Up: true}, KubeletRelist: t0.Add(11 * time.Second), Files: []*types.File{&v3, &bak}}, v3.ChangedAt.Add(1500*time.Millisecond), testOpts); len(chs) != 0 {
		t.Errorf("a recheck of the same snapshot: %+v, want nothing", chs)
	}
	// The next relist reads both files: the .bak wins again, an UPDATE.
	if got := podOps(step(3, t0.Add(13*time.Second), v3.ChangedAt.Add(2*time.Second), nil, &v3, &bak)); got != "UPDATE web.yaml.bak" {
		t.Fatalf("the next relist: %q", got)
	}
}

// The same on the real kubelet (a clean-clone CI run's
// shadowed-edited-quiet): the first write came 30 ms after a relist too,
// which podwatch took in after it. That relist changed nothing, but its
// take-in forgot that the write had displaced the .bak, so the next
// relist's return to it between the writes went unsaid.
func TestKubeletRelistSeenLateWentBackAfterAnotherLateOne(t *testing.T) {
	var st State
	step, bak, v2, v3 := bakWinsThenWritten(t, &st, 9030*time.Millisecond, 11100*time.Millisecond)
	// The relist at +9s, 30 ms before that write, taken in: it read
	// web.yaml's first version and the .bak, which the kubelet ran.
	if chs := step(2, t0.Add(9*time.Second), v2.ChangedAt.Add(700*time.Millisecond), nil, &v2, &bak); len(chs) != 0 {
		t.Fatalf("the relist before the write, taken in: %+v, want nothing", chs)
	}
	if got := podOps(step(3, t0.Add(9*time.Second), v3.ChangedAt, []string{"web.yaml"}, &v3, &bak)); got != "UPDATE web.yaml" {
		t.Fatalf("web.yaml written again: %q", got)
	}
	chs := step(3, t0.Add(11*time.Second), v3.ChangedAt.Add(700*time.Millisecond), nil, &v3, &bak)
	if len(chs) != 1 || chs[0].Reason != types.ReasonUpdated || chs[0].Op != "" || chs[0].File != "web.yaml.bak" {
		t.Fatalf("the relist between the writes, taken in: %+v, want one UPDATE event of web.yaml.bak", chs)
	}
}
