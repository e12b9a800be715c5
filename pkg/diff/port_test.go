package diff

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A change that waits to settle is said once it has, though a busy folder
// folded the window that made it meanwhile; and a recheck, which hands
// the same snapshot again, takes none of its events in twice. What waits
// is a change of file alone: an editor's backup of the same content,
// which wins the pod's key.
func TestPortWaitingChangeOutlivesAFold(t *testing.T) {
	opts := testOpts
	var st State
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	web1 := valid("web.yaml", pod("web", "img:1"), t0)
	s := snap(true, web1)
	s.Seq = 1
	if chs, _ := Advance(&st, s, t0, opts); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("the list: %v", chs)
	}
	bak := valid("web.yaml.bak", pod("web", "img:1"), at(100*time.Millisecond))
	files := []types.File{web1, bak, {}}
	var recheck time.Time
	for i := range portWindowMax + 4 {
		x := valid("x.yaml", pod("x", fmt.Sprintf("img:%d", i)), at(100*time.Millisecond))
		files[2] = x
		s = snap(false, files...)
		s.Seq, s.Time = uint64(i+2), at(time.Duration(i+1)*10*time.Millisecond)
		s.Events = []types.WatchEvent{{Name: "x.yaml"}}
		if i == 0 {
			s.Events = append(s.Events, types.WatchEvent{Name: "web.yaml.bak"})
		}
		var chs []types.Change
		chs, recheck = Advance(&st, s, s.Time, opts)
		for _, ch := range chs {
			if ch.File == "web.yaml.bak" {
				t.Fatalf("step %d: the backup's change said before it settled: %v", i, ch)
			}
		}
	}
	if recheck.IsZero() {
		t.Fatal("no recheck asked for the backup's waiting change")
	}
	inputs := len(st.port.tl.Inputs())
	chs, _ := Advance(&st, s, recheck, opts)
	if got := podOps(chs); got != "UPDATE web.yaml.bak" {
		t.Errorf("at the recheck: %q, want the waiting UPDATE of web.yaml.bak", got)
	}
	if n := len(st.port.tl.Inputs()); n > inputs {
		t.Errorf("the recheck took its snapshot in again: %d inputs, was %d", n, inputs)
	}
}

// A content change the port's own view makes is said at once, though
// the file is still open for writing: the kubelet read it at its event.
// A drop is said once it settled, before the relist that takes it back. While web.yaml.bak wins, a chmod of web.yaml is a modify for the
// kubelet's watch: it runs web.yaml's pod until the next relist brings
// the .bak back.
func TestPortSaysAtOnceWhatTheKubeletDoesAtOnce(t *testing.T) {
	r := newPortRun(2 * time.Second)
	r.rechecks = true
	web := valid("web.yaml", pod("web", "img:1"), t0)
	bak := valid("web.yaml.bak", pod("web", "img:bak"), t0.Add(6*time.Second))
	chmod := web
	chmod.ChangedAt, chmod.Complete = t0.Add(17*time.Second), false
	var said []string
	step := func(at, kr time.Duration, events []types.WatchEvent, files ...*types.File) {
		t.Helper()
		if ops := podOps(r.step(at, kr, events, files...)); ops != "" {
			said = append(said, ops)
		}
	}
	step(0, 0, nil, &web)
	step(4*time.Second, 4*time.Second, []types.WatchEvent{}, &web)
	step(6*time.Second, 4*time.Second, []types.WatchEvent{{Name: "web.yaml.bak"}}, &web, &bak)
	step(8*time.Second, 8*time.Second, []types.WatchEvent{}, &web, &bak)
	step(16*time.Second, 16*time.Second, []types.WatchEvent{}, &web, &bak)
	step(17*time.Second, 16*time.Second, []types.WatchEvent{{Name: "web.yaml"}}, &chmod, &bak)
	step(17900*time.Millisecond, 17900*time.Millisecond, []types.WatchEvent{}, &chmod, &bak)
	want := []string{"ADD web.yaml", "UPDATE web.yaml.bak", "UPDATE web.yaml", "UPDATE web.yaml.bak"}
	if !slices.Equal(said, want) {
		t.Errorf("said %q, want %q", said, want)
	}
	// web.yaml.bak deleted: the kubelet's watch drops the pod; web.yaml
	// comes back at the next relist.
	said = nil
	step(18*time.Second, 17900*time.Millisecond, []types.WatchEvent{{Name: "web.yaml.bak", Gone: true}}, &chmod)
	step(19900*time.Millisecond, 19900*time.Millisecond, []types.WatchEvent{}, &chmod)
	want = []string{"REMOVE web.yaml.bak", "ADD web.yaml"}
	if !slices.Equal(said, want) {
		t.Errorf("said %q, want %q", said, want)
	}
}

// A relist of the kubelet's not seen is taken in once a period has gone
// by with no file changed in it, dated a period back: whenever the
// kubelet made it in that period, it read the folder as it is now.
func TestPortUnseenRelistOnlyOverAQuietPeriod(t *testing.T) {
	period := 20 * time.Second
	ps := newPortState()
	f := valid("web.yaml", pod("web", "img:1"), t0)
	s := snap(true, f)
	s.KubeletRelist = t0
	ps.tl.Add(s)
	for _, tc := range []struct {
		changed, now time.Duration
		want         bool
	}{
		{changed: 5 * time.Second, now: 15 * time.Second, want: false}, // within a period of the last
		{changed: 5 * time.Second, now: 30 * time.Second, want: true},
		{changed: 25 * time.Second, now: 30 * time.Second, want: false}, // a write within the period
	} {
		g := valid("web.yaml", pod("web", "img:2"), t0.Add(tc.changed))
		next := snap(false, g)
		got := ps.unseenRelist(&next, t0.Add(tc.now), period)
		if got != tc.want {
			t.Errorf("changed at +%v, now +%v: unseen relist %v, want %v", tc.changed, tc.now, got, tc.want)
		}
		if got && !next.KubeletRelist.Equal(t0.Add(tc.now-period)) {
			t.Errorf("changed at +%v, now +%v: dated %v, want a period back", tc.changed, tc.now, next.KubeletRelist)
		}
	}
}

// emacs's save with backups: web.yaml renamed to web.yaml~, the new
// content written to web.yaml. The kubelet's relist goes back to the
// backup, which sorts last; the UPDATE it makes is dated by that relist
// as podwatch saw it open the folder, even when said after a later one:
// the follower counts only a pod created after the change's time, and the
// kubelet starts the backup's pod right after its relist.
func TestPortRelistUpdateIsDatedByItsRelist(t *testing.T) {
	r := newPortRun(2 * time.Second)
	v1f := valid("web.yaml", pod("web", "img:1"), t0)
	back := valid("web.yaml~", pod("web", "img:1"), t0.Add(4410*time.Millisecond))
	v2f := valid("web.yaml", pod("web", "img:2"), t0.Add(4410*time.Millisecond))
	var updates []types.Change
	step := func(at, kr time.Duration, events []types.WatchEvent, files ...*types.File) {
		t.Helper()
		for _, ch := range r.step(at, kr, events, files...) {
			if ch.Op == types.OpUpdate {
				updates = append(updates, ch)
			}
		}
	}
	step(0, 0, nil, &v1f)
	step(2*time.Second, 2*time.Second, []types.WatchEvent{}, &v1f)
	step(4*time.Second, 4*time.Second, []types.WatchEvent{}, &v1f)
	step(4410*time.Millisecond, 4*time.Second, []types.WatchEvent{{Name: "web.yaml", Gone: true}, {Name: "web.yaml~"}, {Name: "web.yaml"}}, &v2f, &back)
	// Another pod's file comes just after the relist opened the folder,
	// and podwatch sees that relist after it: the relist is then not the
	// window's last input.
	other := valid("other.yaml", pod("other", "img:1"), t0.Add(5950*time.Millisecond))
	step(5950*time.Millisecond, 4*time.Second, []types.WatchEvent{{Name: "other.yaml"}}, &v2f, &back, &other)
	step(5960*time.Millisecond, 5910*time.Millisecond, []types.WatchEvent{}, &v2f, &back, &other)
	step(7910*time.Millisecond, 7910*time.Millisecond, []types.WatchEvent{}, &v2f, &back, &other)
	step(9910*time.Millisecond, 9910*time.Millisecond, []types.WatchEvent{}, &v2f, &back, &other)
	var got *types.Change
	for i := range updates {
		if updates[i].File == "web.yaml~" {
			got = &updates[i]
		}
	}
	if got == nil {
		t.Fatalf("no UPDATE to web.yaml~ among %v", podOps(updates))
	}
	if want := t0.Add(5910 * time.Millisecond); !got.At.Equal(want) {
		t.Errorf("UPDATE to web.yaml~ dated %v, want the relist that made it, %v", got.At.Sub(t0), want.Sub(t0))
	}
}

// While the kubelet's phase is known (the agent sets KubeletRelist), a
// relist overdue is a file source held up, which relists late: an invalid
// file's pod is removed at the kubelet's relist seen, not at one the port
// infers from the time gone by.
func TestPortInfersNoRelistWhileThePhaseIsKnown(t *testing.T) {
	r := newPortRun(2 * time.Second)
	web := valid("web.yaml", pod("web", "img:1"), t0)
	bad := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("line 4: spec.containers: Required value"), ChangedAt: t0.Add(time.Second), Complete: true}
	step := func(at, kr time.Duration, events []types.WatchEvent, files ...*types.File) string {
		t.Helper()
		return podOps(r.step(at, kr, events, files...))
	}
	step(0, 0, nil, &web)
	step(time.Second, 0, []types.WatchEvent{{Name: "web.yaml"}}, &bad)
	if ops := step(10*time.Second, 0, []types.WatchEvent{}, &bad); ops != "" {
		t.Errorf("with the kubelet's relist overdue: said %q, want nothing before its relist", ops)
	}
	if ops := step(12*time.Second, 12*time.Second, []types.WatchEvent{}, &bad); ops != "REMOVE web.yaml" {
		t.Errorf("at the kubelet's relist: said %q, want REMOVE web.yaml", ops)
	}
}

// portRun steps the port engine through snapshots of /m as the agent
// hands them, the first its own list.
type portRun struct {
	opts Options
	st   State
	seq  uint64
	// rechecks: each step also takes the rechecks it asks for, as the
	// agent does when no snapshot comes first (a drop settling).
	rechecks bool
	// signs, when set, adds to each snapshot what the agent knows of the
	// kubelet's phase beyond its last relist.
	signs func(*types.Snapshot)
}

func newPortRun(period time.Duration) *portRun {
	opts := testOpts
	opts.RelistPeriod = period
	return &portRun{opts: opts}
}

// step hands the next snapshot, at t0+at, carrying the kubelet's relist
// at t0+kr, and returns what was said.
func (r *portRun) step(at, kr time.Duration, events []types.WatchEvent, files ...*types.File) []types.Change {
	r.seq++
	now := t0.Add(at)
	snap := types.Snapshot{Time: now, Seq: r.seq, Relist: r.seq == 1, Path: "/m", Watch: types.WatchStatus{Up: true}, Files: files, Events: events, KubeletRelist: t0.Add(kr)}
	if r.signs != nil {
		r.signs(&snap)
	}
	chs, recheck := Advance(&r.st, snap, now, r.opts)
	for r.rechecks && !recheck.IsZero() {
		var more []types.Change
		more, recheck = Advance(&r.st, snap, recheck, r.opts)
		chs = append(chs, more...)
	}
	return chs
}
