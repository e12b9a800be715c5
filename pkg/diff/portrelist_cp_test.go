package diff

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// cp writes web.yaml in place just after a relist of the kubelet's opened
// the folder, and before the relist opened the file: the relist read the
// new content and made the UPDATE podwatch said on the watch, whose event
// the kubelet took in after it, reading the same content again. That is
// one restart, said already; the relist, placed before the event, dates
// it, and is no restart more.
func TestPortRelistThatReadAWriteInPlaceIsNoRestartMore(t *testing.T) {
	r := newPortRun(2 * time.Second)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	v1 := valid("web.yaml", pod("web", "img:1"), t0)
	v2 := valid("web.yaml", pod("web", "img:2"), t0.Add(ms(11480)))
	r.step(0, 0, nil, &v1)
	r.step(ms(9600), ms(9500), []types.WatchEvent{}, &v1)
	if ops := podOps(r.step(ms(11480), ms(9500), []types.WatchEvent{{Name: "web.yaml", Folded: 1}}, &v2)); ops != "UPDATE web.yaml" {
		t.Fatalf("at cp's write: said %q, want UPDATE web.yaml", ops)
	}
	r.signs = func(s *types.Snapshot) {
		s.KubeletRelistRead = types.RelistRead{Listed: []string{"web.yaml"},
			Written: []types.RelistWrite{{Name: "web.yaml", Before: true, Since: t0.Add(ms(11470))}}}
	}
	for _, at := range []int{12200, 13000, 14000} {
		if chs := r.step(ms(at), ms(11490), []types.WatchEvent{}, &v2); len(chs) != 0 {
			for _, ch := range chs {
				t.Errorf("at +%dms: said %s %s %q, want nothing more", at, ch.Reason, ch.File, ch.Message)
			}
		}
	}
}

// podwatch's own list reads, in byte order, cp's write of a.yaml (a copy
// of b.yaml: a.yaml now gives b's pod) and z.yaml, created before a
// relist of the kubelet's opened the folder. The relist, handed late, is
// placed after z.yaml's creation and so past a.yaml's change, which came
// after its open: the relist may have read a.yaml as it was, and kept
// a's pod. Its REMOVE is one the kubelet may skip at that relist.
func TestPortRelistPassingOverAChangeMaySkipItsRemove(t *testing.T) {
	r := newPortRun(2 * time.Second)
	r.opts.SettleDelay = 100 * time.Millisecond
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	a, b := valid("a.yaml", pod("a", "img:1"), t0), valid("b.yaml", pod("b", "img:1"), t0)
	cp, z := valid("a.yaml", pod("b", "img:1"), t0.Add(ms(12700))), valid("z.yaml", pod("z", "img:1"), t0.Add(ms(12700)))
	read := types.RelistRead{Listed: []string{"a.yaml", "b.yaml"}}
	list, next := false, ms(2000)
	r.signs = func(s *types.Snapshot) {
		s.Relist = s.Relist || list
		if list {
			s.Events = nil
		}
		s.KubeletRelistRead, s.KubeletRelistNext = read, t0.Add(next)
		if !s.Relist {
			s.Changed = []string{}
		}
	}
	r.step(0, 0, nil, &a, &b)
	next = ms(12350)
	r.step(ms(10400), ms(10350), []types.WatchEvent{}, &a, &b)
	list = true
	r.step(ms(12700), ms(10350), nil, &cp, &b, &z)
	// The same list again, with the relist that opened the folder at
	// +12.35 s, which listed z.yaml.
	r.seq--
	read.Listed, next = []string{"a.yaml", "b.yaml", "z.yaml"}, ms(14350)
	removed := false
	for _, ch := range r.step(ms(13100), ms(12350), nil, &cp, &b, &z) {
		if ch.Op != types.OpRemove || ch.Object.Name != "a-node-1" {
			continue
		}
		removed = true
		if ch.Claim == nil || (ch.Claim.At == types.ClaimAtRelist && !ch.Claim.Estimate && !ch.Claim.MaySkip) {
			t.Errorf("REMOVE of a's pod said for sure at the relist that may have read a.yaml before cp: %q", ch.Message)
		}
	}
	if !removed {
		t.Errorf("no REMOVE of a's pod at the relist")
	}
}
