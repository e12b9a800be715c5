package diff

import (
	"fmt"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A change that waits to settle is said once it has, though a busy folder
// folded the window that made it meanwhile; and a recheck, which hands
// the same snapshot again, takes none of its events in twice.
func TestPortWaitingChangeOutlivesAFold(t *testing.T) {
	opts := testOpts
	opts.Engine = EnginePort
	var st State
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	web1 := valid("web.yaml", pod("web", "img:1"), t0)
	s := snap(true, web1)
	s.Seq = 1
	if chs, _ := Advance(&st, s, t0, opts); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("the list: %v", chs)
	}
	web2 := valid("web.yaml", pod("web", "img:2"), at(100*time.Millisecond))
	web2.Complete = false // still open for writing: it waits to settle
	files := []types.File{web1, {}}
	files[0] = web2
	var recheck time.Time
	for i := range portWindowMax + 4 {
		x := valid("x.yaml", pod("x", fmt.Sprintf("img:%d", i)), at(100*time.Millisecond))
		files[1] = x
		s = snap(false, files...)
		s.Seq, s.Time = uint64(i+2), at(time.Duration(i+1)*10*time.Millisecond)
		s.Events = []types.WatchEvent{{Name: "x.yaml"}}
		if i == 0 {
			s.Events = append(s.Events, types.WatchEvent{Name: "web.yaml"})
		}
		var chs []types.Change
		chs, recheck = Advance(&st, s, s.Time, opts)
		for _, ch := range chs {
			if ch.File == "web.yaml" {
				t.Fatalf("step %d: web.yaml's change said before it settled: %v", i, ch)
			}
		}
	}
	if recheck.IsZero() {
		t.Fatal("no recheck asked for web.yaml's waiting change")
	}
	inputs := len(st.port.tl.Inputs())
	chs, _ := Advance(&st, s, recheck, opts)
	if got := podOps(chs); got != "UPDATE web.yaml" {
		t.Errorf("at the recheck: %q, want the waiting UPDATE of web.yaml", got)
	}
	if n := len(st.port.tl.Inputs()); n > inputs {
		t.Errorf("the recheck took its snapshot in again: %d inputs, was %d", n, inputs)
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
