package diff

import (
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The steps the agent handed the diff in a real-kubelet run: a chmod of
// web.yaml, which web.yaml.bak shadows, comes a moment after the
// kubelet's relist opened the folder, before the agent hands that relist
// in. The kubelet took the relist in first and the chmod's event after
// it: it runs web.yaml's pod until its next relist brings the .bak back.
// The relist not yet handed is not one podwatch missed: taken in as
// unseen at the chmod's step, it went after the chmod, and the two
// restarts read as one.
func TestPortChmodJustAfterARelistHandedLate(t *testing.T) {
	opts := testOpts
	opts.RelistPeriod = 2 * time.Second
	opts.SettleDelay = 100 * time.Millisecond
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	web := valid("web.yaml", pod("web", "img:1"), ms(86))
	web.Complete = true
	bak := valid("web.yaml.bak", pod("web", "img:bak"), ms(5949))
	bak.Complete = true
	var st State
	var cur types.Snapshot
	var recheck time.Time
	var said []types.Change
	advance := func(now time.Time) {
		t.Helper()
		var chs []types.Change
		chs, recheck = Advance(&st, cur, now, opts)
		for _, ch := range chs {
			if ch.Claim != nil {
				said = append(said, ch)
				t.Logf("+%v: %s %s %q", now.Sub(t0), ch.Claim.Op, ch.File, ch.Message)
			}
		}
	}
	// until takes the rechecks the last step asked for up to at in, as
	// the agent does when no snapshot comes first.
	until := func(at time.Time) {
		t.Helper()
		for !recheck.IsZero() && !recheck.After(at) {
			advance(recheck)
		}
	}
	// step is a new snapshot of podwatch's source at at.
	step := func(at time.Time, relist bool, events []types.WatchEvent, files ...*types.File) {
		t.Helper()
		until(at)
		s := types.Snapshot{Time: at, Seq: cur.Seq + 1, Relist: relist, Path: "/m", Watch: types.WatchStatus{Up: true},
			Files: files, Events: events, KubeletRelist: cur.KubeletRelist, KubeletRelistRead: cur.KubeletRelistRead}
		if !relist {
			s.Changed = []string{}
			for _, e := range events {
				s.Changed = append(s.Changed, e.Name)
			}
		}
		cur = s
		advance(at)
	}
	// relisted hands the last snapshot again at at, with the kubelet's
	// relist that opened the folder at kr.
	relisted := func(at, kr time.Time, listed ...string) {
		t.Helper()
		until(at)
		cur.KubeletRelist = kr
		cur.KubeletRelistRead = types.RelistRead{Listed: listed}
		advance(at)
	}
	step(ms(53), true, nil)
	step(ms(99), false, []types.WatchEvent{{Name: "web.yaml"}}, &web)
	step(ms(2053), true, nil, &web)
	relisted(ms(4053), ms(1947), "web.yaml")
	relisted(ms(4698), ms(3948), "web.yaml")
	step(ms(5949), false, []types.WatchEvent{{Name: "web.yaml.bak"}}, &web, &bak)
	step(ms(6053), true, nil, &web, &bak)
	relisted(ms(6698), ms(5947), "web.yaml")
	for i := 3; i <= 9; i++ {
		step(ms(2000*i+53), true, nil, &web, &bak)
		relisted(ms(2000*i+699), ms(2000*i-53), "web.yaml", "web.yaml.bak")
	}
	// web.yaml's mode changes a moment after the last relist opened the
	// folder, and before the agent hands that relist in. Its event says
	// it brought no content: web.yaml's ChangedAt, long before, does not
	// date it.
	step(ms(19981), false, []types.WatchEvent{{Name: "web.yaml", Attrib: true}}, &web, &bak)
	chmod := len(said)
	step(ms(20053), true, nil, &web, &bak)
	relisted(ms(20699), ms(19947), "web.yaml", "web.yaml.bak")
	for i := 11; i <= 12; i++ {
		step(ms(2000*i+53), true, nil, &web, &bak)
		relisted(ms(2000*i+699), ms(2000*i-53), "web.yaml", "web.yaml.bak")
	}
	until(ms(30000))
	var got []string
	for _, ch := range said {
		got = append(got, string(ch.Claim.Op)+" "+ch.File)
	}
	want := []string{"ADD web.yaml", "UPDATE web.yaml.bak", "UPDATE web.yaml", "UPDATE web.yaml.bak"}
	if !slices.Equal(got, want) {
		t.Fatalf("said %q, want %q", got, want)
	}
	if chmod != 3 {
		t.Errorf("%d changes said at the chmod's step, want its UPDATE said at once", chmod)
	}
	if back := said[3].Claim; back.At != types.ClaimAtRelist {
		t.Errorf("the UPDATE back to web.yaml.bak is claimed at the %s, want at a relist", back.At)
	}
	// The chmod came after the relist that opened the folder at 19.947 s:
	// the relist after it, at 21.947 s, brought the .bak back, for sure.
	if back := said[3]; !back.At.Equal(ms(21947)) || back.Claim.MaySkip {
		t.Errorf("the UPDATE back to web.yaml.bak at +%v, may skip %v; want at the relist at +21.947s, made for sure", back.At.Sub(t0), back.Claim.MaySkip)
	}
}
