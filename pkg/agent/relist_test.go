package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/source/relist"
	"github.com/podwatch/podwatch/pkg/types"
)

// relistOptions are agent options on a fresh folder and state dir, JSON
// on stdout, no metrics server.
func relistOptions(t *testing.T) Options {
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.Source.Path = t.TempDir()
	o.StateDir = t.TempDir()
	o.Metrics.BindAddress = "0"
	o.Output = "json"
	return o
}

// stdoutEvents decodes the JSON Events printed so far.
func stdoutEvents(t *testing.T, out string) []v1.Event {
	t.Helper()
	var evs []v1.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e v1.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}

func withReason(evs []v1.Event, reason string) []v1.Event {
	var out []v1.Event
	for _, e := range evs {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// The loop's part: each change of phase is logged, a loss is one Node
// Warning, the metrics follow, and the phase is kept for the diff.
func TestLoopObservesTheRelistPhase(t *testing.T) {
	o := relistOptions(t)
	o.Source.FileCheckFrequency = 20 * time.Second
	var stdout, logs testutil.LockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	m := metrics.New("test", nil)
	p, err := New(o, Env{Stdout: &stdout, Log: log}).build(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if p.relist == nil {
		t.Fatal("no relist detector with the default options")
	}
	if got := p.relist.Options(); got.Path != o.Source.Path || got.OwnListPeriod != 20*time.Second {
		t.Errorf("detector on %q beside a source listing every %v, want %q and 20s", got.Path, got.OwnListPeriod, o.Source.Path)
	}
	if got := p.relist.Options().OwnLists; got != relist.OwnLists(p.src) {
		t.Errorf("detector told of lists by %v, want the file source", got)
	}
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: at, Next: at.Add(2 * time.Second)}
	r := &types.KubeletRelist{At: at, Seen: at.Add(time.Millisecond), Files: 2, OnPhase: true}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: r, Phase: known})
	if p.loop.relist != known || !p.loop.pending.Equal(r.At) {
		t.Errorf("loop keeps %+v and hands the diff %v, want the relist at %v", p.loop.relist, p.loop.pending, r.At)
	}
	// The same phase again, a later relist on it: not logged again.
	known2 := known
	known2.Last, known2.Next = at.Add(2*time.Second), at.Add(4*time.Second)
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: known2.Last, OnPhase: true}, Phase: known2})
	lost := types.RelistPhase{State: types.RelistLost, Period: 2 * time.Second, Last: known2.Last, Why: "no full read"}
	p.loop.observeRelist(ctx, types.RelistObservation{Phase: lost})
	p.loop.observeRelist(ctx, types.RelistObservation{Phase: types.RelistPhase{Why: "the kubelet's relist was lost"}})
	// The loss rides with the unknown phase after it, for the diff
	// (Snapshot.KubeletRelistLost), until the phase is known again.
	if p.loop.relistLost.IsZero() {
		t.Error("the loss is not kept for the diff through the unknown phase after it")
	}
	defer func() {
		p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: known2.Last, OnPhase: true}, Phase: known2})
		if !p.loop.relistLost.IsZero() {
			t.Errorf("the loss at %v is kept once the phase is known again", p.loop.relistLost)
		}
	}()

	l := logs.String()
	if n := strings.Count(l, "kubelet relist phase known"); n != 1 {
		t.Errorf("known logged %d times, want once:\n%s", n, l)
	}
	for _, want := range []string{"period=2s", "the kubelet relists at another period than --file-check-frequency",
		"kubelet relist lost", "kubelet relist phase unknown"} {
		if !strings.Contains(l, want) {
			t.Errorf("logs lack %q:\n%s", want, l)
		}
	}
	evs := withReason(stdoutEvents(t, stdout.String()), types.ReasonKubeletRelistLost)
	if len(evs) != 1 {
		t.Fatalf("%d KubeletRelistLost events, want 1:\n%s", len(evs), stdout.String())
	}
	e := evs[0]
	if e.Type != v1.EventTypeWarning || e.InvolvedObject.Kind != "Node" || e.InvolvedObject.Name != "node-1" {
		t.Errorf("event %s %s/%s, want a Warning on node node-1", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name)
	}
	for _, want := range []string{o.Source.Path, "every 2s", "has stopped: none for three periods", "the kubelet may be down or reading another folder"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q lacks %q", e.Message, want)
		}
	}
	// The time it was last seen is for whoever digs: the detail.
	if d := e.Annotations["podwatch.io/detail"]; strings.Contains(e.Message, "2026-") || !strings.Contains(d, "2026-11-30T09:30:02Z") {
		t.Errorf("message %q, detail %q: want the last relist's time in the detail only", e.Message, d)
	}
	mfs := testutil.GatherMetrics(t, m)
	if got := testutil.MetricValue(mfs, "podwatch_kubelet_relist_lost_total"); got != 1 {
		t.Errorf("lost_total %v, want 1", got)
	}
}

func TestRelistDetectionOff(t *testing.T) {
	o := relistOptions(t)
	o.Relist.Enabled = false
	p, err := New(o, Env{}).build(context.Background(), metrics.New("test", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if p.relist != nil {
		t.Error("a relist detector with --kubelet-relist-detection=false")
	}
}

// The loop dates the diff's relist by the kubelet's once its phase is
// known: an invalid manifest's pod is removed at the kubelet's relist, not
// at podwatch's own, and the message says no estimate; while the phase is
// unknown podwatch's own relist stands in and says so.
func TestLoopTellsTheDiffTheKubeletsRelist(t *testing.T) {
	f := newRelistFixture(t, 10*time.Second)
	p, at, good, other, bad, snap, removed := f.p, f.at, f.good, f.other, f.bad, f.snap, f.removed
	ctx := context.Background()

	snap(1, true, good, other)
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: at, Next: at.Add(2 * time.Second)}
	// The relist that makes the phase known is not on it yet; it counts.
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: at}, Phase: known})
	if p.loop.relistT == nil || !p.loop.pending.Equal(at) {
		t.Fatalf("the phase known set no timer for its last relist (pending %v)", p.loop.pending)
	}
	p.loop.relistT.Stop()
	p.loop.relistT, p.loop.kubeletRelist = nil, p.loop.pending // what the timer does
	snap(2, false, bad, other)
	// podwatch's own relist is no kubelet relist once the phase is known.
	snap(3, true, bad, other)
	if n := len(removed()); n != 0 {
		t.Fatalf("%d REMOVEs before the kubelet's relist", n)
	}
	later := known
	later.Last, later.Next = at.Add(20*time.Second), at.Add(22*time.Second)
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: later.Last, OnPhase: true}, Phase: later})
	p.loop.relistT.Stop()
	p.loop.relistT, p.loop.kubeletRelist = nil, p.loop.pending
	// The diff holds events for the next relist only from when it is due.
	if s := p.loop.withKubelet(types.Snapshot{}); !s.KubeletRelist.Equal(later.Last) || !s.KubeletRelistNext.Equal(later.Next) {
		t.Errorf("the diff is told of the relist at %v, the next due %v; want %v and %v", s.KubeletRelist, s.KubeletRelistNext, later.Last, later.Next)
	}
	p.loop.step(ctx)
	rm := removed()
	if len(rm) != 1 || !strings.HasSuffix(rm[0].Message, "the kubelet stops the pod at its relist") {
		t.Fatalf("REMOVEs at the kubelet's relist: %+v", rm)
	}
}

// A write the detector saw land during the kubelet's relist, before the
// relist opened the file, was read by it, though podwatch read it after
// the relist's folder open: the diff is told, and the pod goes at that
// relist.
func TestLoopTellsTheDiffWhatTheRelistSawWritten(t *testing.T) {
	f := newRelistFixture(t, 30*time.Millisecond)
	p, at, good, other, bad, snap, removed := f.p, f.at, f.good, f.other, f.bad, f.snap, f.removed
	ctx := context.Background()

	snap(1, true, good, other)
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: at, Next: at.Add(2 * time.Second)}
	written := []types.RelistWrite{{Name: "web.yaml", Before: true}}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: at, OnPhase: true, RelistRead: types.RelistRead{Written: written}}, Phase: known})
	snap(2, false, bad, other)
	if rm := removed(); len(rm) != 0 {
		t.Fatalf("REMOVE before the relist was taken in: %+v", rm)
	}
	p.loop.relistT.Stop()
	p.loop.relistT = nil
	p.loop.takeInRelist(ctx)
	if rm := removed(); len(rm) != 1 {
		t.Fatalf("REMOVEs at the relist that read the invalid write: %+v", rm)
	}
}

// What the folder held at the relist's open, and what came after it, go
// to the diff with the relist: a name among them gone since went after
// the open.
func TestLoopTellsTheDiffWhatTheFolderHeldAtTheRelist(t *testing.T) {
	f := newRelistFixture(t, 30*time.Millisecond)
	p, at, good, other, snap := f.p, f.at, f.good, f.other, f.snap
	ctx := context.Background()

	snap(1, true, good, other)
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: at, Next: at.Add(2 * time.Second)}
	listed, came := []string{"other.yaml", "web.yaml"}, []string{"web.yaml~"}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: at, OnPhase: true, RelistRead: types.RelistRead{Listed: listed, Came: came}}, Phase: known})
	if p.loop.kubeletSeen != nil {
		t.Fatalf("listed %q before the relist was taken in", p.loop.kubeletSeen.Listed)
	}
	p.loop.relistT.Stop()
	p.loop.relistT = nil
	p.loop.takeInRelist(ctx)
	if s := p.loop.kubeletSeen; !p.loop.kubeletRelist.Equal(at) || s == nil || !slices.Equal(s.Listed, listed) || !slices.Equal(s.Came, came) {
		t.Fatalf("taken in: relist %v seen %+v, want %v, listed %q and came %q", p.loop.kubeletRelist, s, at, listed, came)
	}
}

// The relist that makes the phase known is as fresh as any: a step before
// relistLag (a snapshot arriving meanwhile) must not report what the
// kubelet's sync loop may not have yet. The relist before it stands in at
// once, so that podwatch's own no longer does.
func TestLoopWaitsForTheRelistThatMadeThePhaseKnown(t *testing.T) {
	// Turned invalid between the kubelet's last two relists, a moment
	// ago: invalid for a full period (fileCheckFrequency) while the phase
	// is unknown, the pod would be gone for sure, whatever podwatch saw.
	f := newRelistFixture(t, 21*time.Second)
	p, good, other, bad, snap, removed := f.p, f.good, f.other, f.bad, f.snap, f.removed
	at := time.Now().Add(-25 * time.Second)
	bad.ChangedAt = at.Add(21 * time.Second)
	ctx := context.Background()

	snap(1, true, good, other)
	snap(2, false, bad, other)
	last := at.Add(22 * time.Second)
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: last, Next: last.Add(2 * time.Second)}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: last}, Phase: known})
	if p.loop.relistT == nil || !p.loop.pending.Equal(last) {
		t.Fatalf("no timer for the relist that made the phase known (pending %v)", p.loop.pending)
	}
	// A snapshot, and podwatch's own relist, before the timer.
	snap(3, false, bad, other)
	snap(4, true, bad, other)
	if rm := removed(); len(rm) != 0 {
		t.Fatalf("REMOVE before relistLag passed since the kubelet's relist was seen: %+v", rm)
	}
	p.loop.relistT.Stop()
	p.loop.relistT, p.loop.kubeletRelist = nil, p.loop.pending // what the timer does
	p.loop.step(ctx)
	rm := removed()
	if len(rm) != 1 || !strings.HasSuffix(rm[0].Message, "the kubelet stops the pod at its relist") {
		t.Fatalf("REMOVEs at the kubelet's relist: %+v", rm)
	}
}

// A relist is taken in relistLag after it was seen, at most half a period:
// long enough for a busy kubelet's sync loop to have it, short enough that
// it is in before the next relist.
func TestLoopTakesARelistInAfterItsLag(t *testing.T) {
	for _, tc := range []struct {
		period, lag time.Duration
	}{
		{20 * time.Second, relistLag},
		{2 * time.Second, 750 * time.Millisecond},
		{time.Second, 500 * time.Millisecond},
	} {
		t.Run(tc.period.String(), func(t *testing.T) {
			o := relistOptions(t)
			clk := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC))
			p, err := New(o, Env{Stdout: &testutil.LockedBuffer{}, Log: slog.New(slog.DiscardHandler), Clock: clk}).build(context.Background(), metrics.New("test", nil))
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			at := clk.Now()
			known := types.RelistPhase{State: types.RelistKnown, Period: tc.period, Last: at, Next: at.Add(tc.period)}
			p.loop.observeRelist(context.Background(), types.RelistObservation{Relist: &types.KubeletRelist{At: at}, Phase: known})
			fired := func() bool {
				select {
				case <-p.loop.relistT.C():
					return true
				default:
					return false
				}
			}
			clk.Step(tc.lag - time.Millisecond)
			if fired() {
				t.Fatalf("taken in before %v", tc.lag)
			}
			clk.Step(time.Millisecond)
			if !fired() {
				t.Fatalf("not taken in at %v", tc.lag)
			}
		})
	}
}

// relistFixture is an agent's loop stepped by hand on web.yaml and x.yaml,
// both valid a minute ago, and bad, web.yaml turned invalid badAfter that.
type relistFixture struct {
	p                *parts
	at               time.Time
	good, other, bad *types.File
	snap             func(seq uint64, relist bool, files ...*types.File)
	removed          func() []v1.Event
	printed          func(reason string) []v1.Event
}

func newRelistFixture(t *testing.T, badAfter time.Duration) *relistFixture {
	t.Helper()
	o := relistOptions(t)
	var stdout testutil.LockedBuffer
	p, err := New(o, Env{Stdout: &stdout, Log: slog.New(slog.DiscardHandler)}).build(context.Background(), metrics.New("test", nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	f := &relistFixture{p: p, at: time.Now().Add(-time.Minute)}
	pod := &types.Pod{Key: "kube-system/web-node-1", Hash: "h1", Config: "c1", JSON: json.RawMessage(`{}`)}
	f.good = &types.File{Name: "web.yaml", Path: o.Source.Path + "/web.yaml", Pod: pod, ChangedAt: f.at, Complete: true}
	f.other = &types.File{Name: "x.yaml", Path: o.Source.Path + "/x.yaml", Pod: &types.Pod{Key: "kube-system/x-node-1", Hash: "h2", Config: "c2", JSON: json.RawMessage(`{}`)}, ChangedAt: f.at, Complete: true}
	f.bad = &types.File{Name: "web.yaml", Path: f.good.Path, Err: errors.New("line 4: spec.containers: Required value"), ChangedAt: f.at.Add(badAfter)}
	f.snap = func(seq uint64, relist bool, files ...*types.File) {
		s := types.Snapshot{Time: time.Now(), Seq: seq, Relist: relist, Path: o.Source.Path, Files: files, Watch: types.WatchStatus{Up: true}}
		p.loop.snap = &s
		p.loop.step(context.Background())
	}
	f.printed = func(reason string) []v1.Event { return withReason(stdoutEvents(t, stdout.String()), reason) }
	f.removed = func() []v1.Event { return f.printed(types.ReasonRemoved) }
	return f
}

// Full reads less than a period apart while no phase is known go to the
// diff at once, as a phase seen lost does: a held-up file source's.
func TestLoopTellsTheDiffOfUnevenReads(t *testing.T) {
	f := newRelistFixture(t, 30*time.Millisecond)
	p, at := f.p, f.at
	ctx := context.Background()
	unknown := types.RelistPhase{Why: "no periodic full read of the folder seen yet"}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: at.Add(-time.Second)}, Phase: unknown})
	if !p.loop.uneven.IsZero() {
		t.Fatalf("uneven %v after an even read", p.loop.uneven)
	}
	p.loop.observeRelist(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: at, Uneven: true}, Phase: unknown})
	if !p.loop.uneven.Equal(at) {
		t.Fatalf("uneven %v, want the read's %v", p.loop.uneven, at)
	}
}

// A relist seen late after a change was said on the watch makes the loop
// diff again at once: the diff amends that change, as one the held-up
// file source may have taken in with more restarts.
func TestLoopAmendsAtALateRelist(t *testing.T) {
	f := newRelistFixture(t, 0)
	edited := *f.good
	edited.Pod = &types.Pod{Key: "kube-system/web-node-1", Hash: "h2", Config: "c2", JSON: json.RawMessage(`{}`)}
	f.snap(1, true, f.good)
	f.snap(2, false, &edited)
	if n := len(f.printed(types.ReasonUpdated)); n != 1 {
		t.Fatalf("%d UPDATEs, want 1", n)
	}
	ctx := context.Background()
	now := time.Now()
	known := types.RelistPhase{State: types.RelistKnown, Period: 2 * time.Second, Last: now, Next: now.Add(2 * time.Second)}
	f.p.loop.relisted(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: now, OnPhase: true}, Phase: known})
	if evs := f.printed(types.ReasonMayHaveRestarted); len(evs) != 0 {
		t.Fatalf("amended at a relist on time: %v", evs)
	}
	late := known
	late.HeldUp = now.Add(2500 * time.Millisecond)
	f.p.loop.relisted(ctx, types.RelistObservation{Relist: &types.KubeletRelist{At: late.HeldUp}, Phase: late})
	evs := f.printed(types.ReasonMayHaveRestarted)
	if len(evs) != 1 || evs[0].InvolvedObject.Name != "web-node-1" || !strings.Contains(evs[0].Message, "came late") {
		t.Fatalf("after a late relist: %v, want one StaticPodMayHaveRestarted for web-node-1 saying the relist came late", evs)
	}
}
