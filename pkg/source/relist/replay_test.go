package relist

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// trace is a sequence of what a watch of the folder reads, written one
// event a line:
//
//	ls NAME...          the folder's regular files when the watch starts
//	MS open .           the folder opened, MS milliseconds after base
//	MS open NAME        a file opened
//	MS came NAME        a regular file created or moved in
//	MS came-other NAME  anything else created or moved in (a symlink)
//	MS went NAME        deleted or moved away
//	MS overflow NAME... events lost; the folder now holds NAME...
//	MS kubelet          the kubelet's own log says it began a relist
//	MS quiet            the queue found empty, nothing read
//
// Events at one time are one batch, read then, from a queue found empty
// just before; MS~SINCE is a batch read at MS from a backlog, the queue
// last found empty at SINCE. Blank lines and lines starting with # are
// left out.
type trace struct {
	names   []string
	batches []batch
	kubelet []time.Time
	// written is when each name last came, for Aged: the trace holds no
	// writes, so a file is as young as its creation.
	written map[string]time.Time
}

func parseTrace(t *testing.T, name, text string) trace {
	t.Helper()
	tr := trace{written: map[string]time.Time{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if f[0] == "ls" {
			tr.names = append(tr.names, f[1:]...)
			slices.Sort(tr.names)
			continue
		}
		readAt, emptyAt, backlog := strings.Cut(f[0], "~")
		ms, err := strconv.ParseFloat(readAt, 64)
		sinceMS := ms
		if backlog && err == nil {
			sinceMS, err = strconv.ParseFloat(emptyAt, 64)
		}
		if err != nil || len(f) < 2 {
			t.Fatalf("%s:%d: want MS[~SINCE] OP [NAME], got %q", name, n, line)
		}
		at := base.Add(time.Duration(ms * float64(time.Millisecond)))
		since := base.Add(time.Duration(sinceMS * float64(time.Millisecond)))
		if f[1] == "kubelet" {
			tr.kubelet = append(tr.kubelet, at)
			continue
		}
		if len(tr.batches) == 0 || !tr.batches[len(tr.batches)-1].at.Equal(at) || f[1] == "quiet" {
			tr.batches = append(tr.batches, batch{at: at, since: since})
		}
		b := &tr.batches[len(tr.batches)-1]
		arg := ""
		if len(f) > 2 {
			arg = f[2]
		}
		switch f[1] {
		case "quiet":
		case "open":
			if arg == "." {
				arg = ""
			}
			b.events = append(b.events, event{op: opened, name: arg})
		case "came":
			b.events = append(b.events, event{op: came, name: arg, regular: true})
		case "came-other":
			b.events = append(b.events, event{op: came, name: arg})
		case "went":
			b.events = append(b.events, event{op: went, name: arg})
		case "overflow":
			b.overflow = true
			b.events = append(b.events, event{op: relisted, name: strings.Join(f[2:], " ")})
		default:
			t.Fatalf("%s:%d: unknown op %q", name, n, f[1])
		}
	}
	return tr
}

// relisted, only in a trace, carries what the folder holds after lost
// events; replay takes it out before the detector sees the batch.
const relisted op = 255

// traceWatch serves the folder and its files' ages as the events replayed
// so far leave them.
type traceWatch struct {
	names   []string
	written map[string]time.Time
}

// apply brings the folder up to b's events.
func (w *traceWatch) apply(b *batch) {
	kept := b.events[:0:0]
	for _, e := range b.events {
		i, found := slices.BinarySearch(w.names, e.name)
		switch {
		case e.op == relisted:
			w.names = strings.Fields(e.name)
			slices.Sort(w.names)
			continue
		case e.op == came && e.regular:
			w.written[e.name] = b.at
			if !found {
				w.names = slices.Insert(w.names, i, e.name)
			}
		case e.op != opened && found:
			w.names = slices.Delete(w.names, i, i+1)
		}
		kept = append(kept, e)
	}
	b.events = kept
}

func (w *traceWatch) Events() <-chan batch    { return nil }
func (w *traceWatch) List() ([]string, error) { return slices.Clone(w.names), nil }
func (w *traceWatch) Close()                  {}
func (w *traceWatch) Aged(names []string, t time.Time) bool {
	return slices.ContainsFunc(names, func(n string) bool { at, ok := w.written[n]; return !ok || at.Before(t) })
}

// replay hands the trace's batches to a detector, one after the other,
// with the clock at each batch's time, checking the tracker at each of its
// deadlines in between as Run does, and returns what it observed.
// ownListPeriod is Options.OwnListPeriod.
func replay(t *testing.T, tr trace, ownListPeriod time.Duration) []types.RelistObservation {
	t.Helper()
	return replayWith(t, tr, Options{OwnListPeriod: ownListPeriod}, testingclock.NewFakeClock(base))
}

// replayWith is replay with opts (Enabled and Path set here), on clk.
func replayWith(t *testing.T, tr trace, opts Options, clk *testingclock.FakeClock) []types.RelistObservation {
	t.Helper()
	opts.Enabled, opts.Path = true, "/manifests"
	d, err := New(opts, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &traceWatch{names: slices.Clone(tr.names), written: map[string]time.Time{}}
	d.wallNow = clk.Now
	d.tracker, d.w, d.listed = NewTracker(d.opts.Tolerance, d.opts.KubeletPeriod), w, -1
	d.list()
	out := make(chan types.RelistObservation, 1024)
	var obs []types.RelistObservation
	for _, b := range tr.batches {
		for dl := d.tracker.Deadline(); !dl.IsZero() && !dl.After(b.at); dl = d.tracker.Deadline() {
			clk.SetTime(dl)
			if !d.emit(context.Background(), out, d.tracker.Check(dl), nil) {
				t.Fatal("emit stopped")
			}
		}
		clk.SetTime(b.at)
		w.apply(&b)
		if !d.handle(context.Background(), out, b) {
			t.Fatal("handle stopped")
		}
		for len(out) > 0 {
			obs = append(obs, <-out)
		}
	}
	return obs
}

// Relists in a folder others change meanwhile, and reads that are not
// relists, as traces: the relists recognised, by the time of their
// folder open (ms) and the files opened.
func TestSignature(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trace string
		want  []string // "MS/FILES" per relist recognised
	}{{
		name:  "a plain relist",
		trace: "ls a b c\n0 open .\n0 open a\n1 open b\n2 open c",
		want:  []string{"0/3"},
	}, {
		name:  "a file deleted after the glob, before its turn, is not opened",
		trace: "ls a b c\n0 open .\n0 open a\n1 went b\n2 open c",
		want:  []string{"0/2"},
	}, {
		name:  "the last file deleted before its turn: the relist ends with its delete",
		trace: "ls a b c\n0 open .\n0 open a\n1 open b\n3 went c",
		want:  []string{"0/2"},
	}, {
		name:  "a file renamed away before its turn",
		trace: "ls a b c\n0 open .\n0 open a\n0 went b\n0 came b.bak\n2 open c",
		want:  []string{"0/2"},
	}, {
		name:  "a file replaced by a symlink before its turn (its target is opened under its own name)",
		trace: "ls a b c\n0 open .\n0 open a\n0 came-other b\n2 open c",
		want:  []string{"0/2"},
	}, {
		name:  "a file created after the glob is not read",
		trace: "ls a c\n0 open .\n0 came b\n0 open b\n1 open a\n2 open c",
		want:  []string{"0/2"},
	}, {
		name:  "a file created just before the folder open must be read",
		trace: "ls a c\n0 came b\n0 open .\n1 open a\n2 open c",
	}, {
		name:  "a file deleted before the folder open is not waited for",
		trace: "ls a b c\n0 went b\n1 open .\n1 open a\n2 open c",
		want:  []string{"1/2"},
	}, {
		name:  "a file created and deleted again meanwhile changes nothing",
		trace: "ls a c\n0 open .\n0 came b\n0 went b\n1 open a\n2 open c",
		want:  []string{"0/2"},
	}, {
		name:  "a file moved over a manifest still names a file, which the kubelet opens",
		trace: "ls a b c\n0 open .\n0 open a\n0 came b\n2 open c",
	}, {
		name: "podwatch's reads of changed files and an editor's opens in between",
		trace: "ls a b c d\n0 open .\n0 open c\n1 open a\n1 open d\n2 open b\n2 came e\n2 open e\n" +
			"3 open c\n3 open b\n4 open d",
		want: []string{"0/4"},
	}, {
		name:  "a reader of some files is no relist",
		trace: "ls a b c\n0 open .\n0 open a\n1 open c",
	}, {
		name:  "a reader of some files is no relist, the others deleted later",
		trace: "ls a b c\n0 open .\n0 open a\n1 open c\n300 went b",
	}, {
		name:  "most files gone and one read: no relist",
		trace: "ls a b c d\n0 open .\n0 went a\n0 went b\n0 went c\n1 open d",
	}, {
		name:  "a deleted file's gap does not stretch the window",
		trace: "ls a b c\n0 open .\n0 open a\n50 went b\n101 open c",
	}, {
		name: "opens read late from a backlog seem far apart, and are not",
		trace: "ls a b c d\n0 open .\n0 open a\n150~0 open b\n300~0 open c\n" +
			"450~0 open d",
		want: []string{"0/4"},
	}, {
		name:  "a backlog found once empty again after the window",
		trace: "ls a b c\n0 open .\n0 open a\n150~0 open b\n300~251 open c",
	}, {
		name:  "a pause: the queue found empty longer than the window, then the next open",
		trace: "ls a b c\n0 open .\n0 open a\n30 open b\n155 quiet\n160 open c",
	}, {
		name:  "the queue found empty within the window: no pause",
		trace: "ls a b c\n0 open .\n0 open a\n30 open b\n125 quiet\n240~125 open c",
		want:  []string{"0/3"},
	}, {
		name:  "the folder as events left it: a file created since the watch started is waited for",
		trace: "ls a\n0 came b\n500 open .\n500 open a\n501 open b\n1000 open .\n1000 open a",
		want:  []string{"500/2"},
	}, {
		name:  "after lost events the folder is listed again",
		trace: "ls a b\n0 overflow a c\n0 open .\n0 open a\n1 open c",
		want:  []string{"0/2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := parseTrace(t, tc.name, tc.trace)
			var got []string
			for _, rl := range relists(replay(t, tr, 0)) {
				got = append(got, fmt.Sprintf("%d/%d", rl.At.Sub(base).Milliseconds(), rl.Files))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("relists %v, want %v", got, tc.want)
			}
		})
	}
}

// ownLists is podwatch's own file source beginning its lists at the
// given times, on clk.
type ownLists struct {
	clk    *testingclock.FakeClock
	starts []time.Duration // after base
}

func (o ownLists) ListStarted() time.Time {
	var last time.Time
	for _, s := range o.starts {
		if at := base.Add(s); !at.After(o.clk.Now()) {
			last = at
		}
	}
	return last
}

// Right after files are written, a full read of them may be podwatch's own
// list re-reading them. Told when its lists begin, the detector sets aside
// only the full read that opened the folder just after one; without that
// it must set aside every one.
func TestFullReadOfYoungFilesWhenOwnListsAreKnown(t *testing.T) {
	const text = `ls
0 came a
0 came b
100 open .
100 open a
101 open b
1000 open .
1000 open a
1001 open b
2100 open .
2100 open a
2101 open b
`
	for _, tc := range []struct {
		name string
		own  []time.Duration // when podwatch's lists began; nil: not told
		want []int64
	}{
		{name: "not told", want: nil},
		{name: "told", own: []time.Duration{990 * time.Millisecond, 2990 * time.Millisecond}, want: []int64{100, 2100}},
		{name: "told, read late", own: []time.Duration{600 * time.Millisecond}, want: []int64{100, 2100}},
		{name: "told, read later than OwnListLag", own: []time.Duration{400 * time.Millisecond}, want: []int64{100, 1000, 2100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(base)
			opts := Options{OwnListPeriod: 2 * time.Second}
			if tc.own != nil {
				opts.OwnLists = ownLists{clk: clk, starts: tc.own}
			}
			var got []int64
			for _, rl := range relists(replayWith(t, parseTrace(t, tc.name, text), opts, clk)) {
				got = append(got, rl.At.Sub(base).Milliseconds())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("relists at %v ms, want %v", got, tc.want)
			}
		})
	}
}

// Recorded traces of the real kubelet's folder in the judge suite, files
// created, renamed and deleted all the time: every relist of the kubelet's
// in a folder holding a file is recognised, anything else recognised
// falls off the phase, and the phase is known by the fourth of the
// kubelet's relists one period apart (or sooner: see
// TestReplayPhaseKnownEarly), at its period, and stays so. (Podwatch's first list may
// be taken in, when it fell on the kubelet's grid.)
func TestReplayRecordedTraces(t *testing.T) {
	const near = 50 * time.Millisecond
	// Podwatch's own lists are in the traces, but not their times: its
	// full reads of young files are seen, and must not qualify.
	eachTrace(t, "*.trace", bothWays, func(t *testing.T, tr trace, obs []types.RelistObservation) {
		got := relists(obs)
		// fourth is the relist the phase is known by: the fourth of the
		// first four of the kubelet's one period apart, each recognised.
		var fourth time.Time
		run, seen := 0, 0
		for j, k := range tr.kubelet {
			i := slices.IndexFunc(got, func(rl types.KubeletRelist) bool { return abs(rl.At.Sub(k)) <= near })
			if i < 0 {
				// Only a folder with nothing to read shows no relist.
				if seen > 0 {
					t.Errorf("the kubelet's relist at %v was not recognised", k.Sub(base))
				}
				run = 0
				continue
			}
			seen++
			switch {
			case run > 0 && abs(k.Sub(tr.kubelet[j-1])-2*time.Second) <= DefaultTolerance:
				run++
			default:
				run = 1
			}
			if run == 4 && fourth.IsZero() {
				fourth = got[i].At
			}
		}
		for _, rl := range got {
			if !slices.ContainsFunc(tr.kubelet, func(k time.Time) bool { return abs(rl.At.Sub(k)) <= near }) && rl.OnPhase {
				t.Errorf("a full read at %v, no relist of the kubelet's, is on the phase", rl.At.Sub(base))
			}
		}
		if fourth.IsZero() {
			t.Fatalf("%d relists of the kubelet's recognised, not four in a row", seen)
		}
		known := false
		for _, o := range obs {
			at := o.Phase.Last
			if o.Relist != nil {
				at = o.Relist.At
			}
			switch {
			case o.Phase.State == types.RelistKnown && !known:
				known = true
				if at.After(fourth) || !slices.ContainsFunc(tr.kubelet, func(k time.Time) bool { return abs(at.Sub(k)) <= near }) {
					t.Errorf("phase known with the read at %v, want a relist of the kubelet's by the fourth in a row, at %v", at.Sub(base), fourth.Sub(base))
				}
				if abs(o.Phase.Period-2*time.Second) > 25*time.Millisecond {
					t.Errorf("period %v, want the kubelet's 2s", o.Phase.Period)
				}
			case known && o.Phase.State != types.RelistKnown:
				t.Errorf("phase %v after it was known: %s", o.Phase.State, o.Phase.Why)
			}
		}
	})
}

// eachTrace replays, in a subtest each, the traces in testdata matching
// pattern, once for each of the kubelet's periods the detector is told
// (Options.KubeletPeriod; 0: not told), and hands check the trace and
// what the tracker observed.
func eachTrace(t *testing.T, pattern string, told []time.Duration, check func(t *testing.T, tr trace, obs []types.RelistObservation)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces match %s: %v", pattern, err)
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range told {
			t.Run(fmt.Sprintf("%s/told=%v", filepath.Base(file), p), func(t *testing.T) {
				tr := parseTrace(t, file, string(text))
				check(t, tr, replayWith(t, tr, Options{KubeletPeriod: p}, testingclock.NewFakeClock(base)))
			})
		}
	}
}

// bothWays is the kubelet's period in the recorded traces, told and not.
var bothWays = []time.Duration{0, 2 * time.Second}

// Told the kubelet's period, as the agent tells it, the detector learns
// the phase from the first interval of the kubelet's it sees when nothing
// else read the folder around it (see Tracker.quick): by the kubelet's
// second relist in the traces that begin so. The other traces learn it by
// cycles, as before: podwatch's own full reads, whose times the traces do
// not hold, or a file source held up, come between.
func TestReplayPhaseKnownEarly(t *testing.T) {
	const near = 50 * time.Millisecond
	want := map[string]int{ // the kubelet's relist the phase is known by
		"shared-folder-1.trace": 2, // by the fourth, not told
		"shared-folder-2.trace": 8,
		"shared-folder-3.trace": 10,
		"shared-folder-4.trace": 2, // by the 26th, not told
	}
	for _, pattern := range []string{"*.trace", filepath.Join("held-up", "*.trace")} {
		eachTrace(t, pattern, []time.Duration{2 * time.Second}, func(t *testing.T, tr trace, obs []types.RelistObservation) {
			name := filepath.Base(strings.Split(t.Name(), "/")[1])
			for _, o := range obs {
				if o.Phase.State != types.RelistKnown {
					continue
				}
				n := slices.IndexFunc(tr.kubelet, func(k time.Time) bool { return abs(o.Phase.Last.Sub(k)) <= near }) + 1
				t.Logf("known by the kubelet's relist %d, %v after its first", n, o.Phase.Last.Sub(tr.kubelet[0]))
				if n != want[name] {
					t.Errorf("known by the kubelet's relist %d (at %v), want %d", n, o.Phase.Last.Sub(base), want[name])
				}
				return
			}
			t.Error("the phase was never known")
		})
	}
}

// Podwatch's own first list reads every file, as a relist does: told when
// its lists begin, the detector does not learn the phase from it and the
// kubelet's relist a period after, but from the kubelet's next two.
func TestOwnListMakesNoQuickPhase(t *testing.T) {
	const text = `ls a b
100 open .
100 open a
101 open b
2100 open .
2100 open a
2101 open b
4100 open .
4100 open a
4101 open b
`
	for _, tc := range []struct {
		name string
		own  []time.Duration // when podwatch's lists began; nil: not told
		want int64           // ms: the read the phase is known by
	}{
		{name: "not told", want: 2100},
		{name: "told", own: []time.Duration{50 * time.Millisecond}, want: 4100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(base)
			opts := Options{KubeletPeriod: 2 * time.Second}
			if tc.own != nil {
				opts.OwnLists = ownLists{clk: clk, starts: tc.own}
			}
			for _, o := range replayWith(t, parseTrace(t, tc.name, text), opts, clk) {
				if o.Phase.State == types.RelistKnown {
					if got := o.Phase.Last.Sub(base).Milliseconds(); got != tc.want {
						t.Errorf("known by the read at %d ms, want %d", got, tc.want)
					}
					return
				}
			}
			t.Errorf("never known, want by the read at %d ms", tc.want)
		})
	}
}
