package agent

import (
	"context"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The relist a period before the one that makes the phase known stands in
// at once, as the detector saw it: with its list of what the folder held
// at its open. Once the folder went, the kubelet takes a deletion in only
// at a relist; a manifest deleted after that relist's open, seen before
// the newer relist is taken in, was read by it, and its pod runs on. The
// next relist that finds it gone stops it: nothing is said before.
func TestLoopTheRelistBeforeThePhaseKnownKeepsWhatItListed(t *testing.T) {
	f := newRelistFixture(t, 30*time.Millisecond)
	p, good := f.p, f.good
	ctx := context.Background()
	path := p.loop.opts.Path
	// Bad news said at once: what is said, not when, is under test.
	p.loop.opts.SettleDelay = 0
	snap := func(seq uint64, relist bool, pathErr error, files ...*types.File) {
		s := types.Snapshot{Time: time.Now(), Seq: seq, Relist: relist, Path: path, PathErr: pathErr, Files: files, Watch: types.WatchStatus{Up: pathErr == nil}}
		p.loop.snap = &s
		p.loop.step(ctx)
	}
	ops := func() string {
		var out string
		for _, reason := range []string{types.ReasonAdded, types.ReasonRemoved} {
			out += fmt.Sprintf("%s=%d ", reason, len(f.printed(reason)))
		}
		return out
	}
	snap(1, true, nil, good)
	snap(2, true, fs.ErrNotExist)
	snap(3, true, nil, good)
	if got, want := ops(), fmt.Sprintf("%s=1 %s=1 ", types.ReasonAdded, types.ReasonRemoved); got != want {
		t.Fatalf("found, the folder gone and back: %s, want %s", got, want)
	}

	first := time.Now().Add(-2 * time.Second)
	listed := types.RelistRead{Listed: []string{"web.yaml"}}
	unknown := types.RelistPhase{Why: "one full read seen"}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: first, Files: 1, RelistRead: listed}, Phase: unknown})
	last := first.Add(2*time.Second + 3*time.Millisecond)
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: last, Next: last.Add(2 * time.Second)}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: last, Files: 1, OnPhase: true, RelistRead: listed}, Phase: known})
	if s := p.loop.kubeletSeen; !p.loop.kubeletRelist.Equal(first) || s == nil || s.At != first {
		t.Fatalf("standing in: the relist at %v seen as %+v, want the detector's of %v", p.loop.kubeletRelist, s, first)
	}
	before := ops()
	// web.yaml deleted just after the newer relist's read of it.
	snap(4, false, nil)
	if got := ops(); got != before {
		t.Fatalf("web.yaml deleted after both relists read it: %s, want %s", got, before)
	}
	p.loop.relistT.Stop()
	p.loop.relistT = nil
	p.loop.takeInRelist(ctx)
	if got := ops(); got != before {
		t.Fatalf("the relist that made the phase known taken in: %s, want %s", got, before)
	}
	next := known
	next.Last, next.Next = last.Add(2*time.Second), last.Add(4*time.Second)
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: next.Last, OnPhase: true}, Phase: next})
	p.loop.relistT.Stop()
	p.loop.relistT = nil
	p.loop.takeInRelist(ctx)
	if got, want := ops(), fmt.Sprintf("%s=1 %s=2 ", types.ReasonAdded, types.ReasonRemoved); got != want {
		t.Fatalf("the relist that found web.yaml gone: %s, want %s", got, want)
	}
}

// A full read off the phase's grid (a backup tool's, podwatch's own first
// list) is not the relist a period before: that one stands in as the phase
// alone knows it.
func TestLoopTheReadBeforeThePhaseKnownOffItsGrid(t *testing.T) {
	f := newRelistFixture(t, 30*time.Millisecond)
	ctx := context.Background()
	last := time.Now()
	listed := types.RelistRead{Listed: []string{"web.yaml"}}
	f.p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: last.Add(-time.Second), Files: 1, RelistRead: listed}, Phase: types.RelistPhase{Why: "one full read seen"}})
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: last, Next: last.Add(2 * time.Second)}
	f.p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: last, Files: 1, OnPhase: true, RelistRead: listed}, Phase: known})
	if want := last.Add(-2 * time.Second); !f.p.loop.kubeletRelist.Equal(want) || f.p.loop.kubeletSeen != nil {
		t.Fatalf("standing in: the relist at %v seen as %+v, want the phase's %v with nothing seen", f.p.loop.kubeletRelist, f.p.loop.kubeletSeen, want)
	}
}
