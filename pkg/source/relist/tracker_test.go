package relist

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

var base = time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)

// step is one input to the tracker, at ms milliseconds after base.
type step struct {
	ms   int
	kind string // "sweep", "own" (a sweep that may be podwatch's), "blind", "see", "overflow"
}

func sweeps(ms ...int) []step {
	out := make([]step, len(ms))
	for i, m := range ms {
		out[i] = step{ms: m, kind: "sweep"}
	}
	return out
}

// every is n sweeps period ms apart from start ms, each moved by the jitter
// at its index (cycled), in ms.
func every(start, period, n int, jitter ...int) []step {
	ms := make([]int, n)
	for i := range ms {
		ms[i] = start + i*period
		if len(jitter) > 0 {
			ms[i] += jitter[i%len(jitter)]
		}
	}
	return sweeps(ms...)
}

// merge orders steps by time, keeping the order of equal ones.
func merge(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ms < out[j-1].ms; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// transition is a phase change as the scenarios write it: state@ms, with
// the period for known.
func transition(p types.RelistPhase, at time.Time) string {
	ms := at.Sub(base).Milliseconds()
	if p.State == types.RelistKnown {
		return fmt.Sprintf("known(%v)@%d", p.Period, ms)
	}
	return fmt.Sprintf("%v@%d", p.State, ms)
}

// drive feeds the steps to a tracker as the detector does, calling Check
// at every deadline that passes, and returns the transitions, the sweeps
// that fell on the phase (ms) and the tracker.
func drive(t *testing.T, tol time.Duration, steps []step, until int) ([]string, []int, *Tracker) {
	t.Helper()
	return driveExpecting(t, tol, 0, steps, until)
}

// driveExpecting is drive with a tracker told the kubelet's period (ms;
// 0: none).
func driveExpecting(t *testing.T, tol time.Duration, expect int, steps []step, until int) ([]string, []int, *Tracker) {
	t.Helper()
	tr := NewTracker(tol, time.Duration(expect)*time.Millisecond)
	var got []string
	var on []int
	record := func(at time.Time, changes []types.RelistPhase) {
		for _, p := range changes {
			got = append(got, transition(p, at))
		}
	}
	catchUp := func(now time.Time) {
		for i := 0; ; i++ {
			d := tr.Deadline()
			if d.IsZero() || d.After(now) {
				return
			}
			if i > 1000 {
				t.Fatalf("deadline %v does not move on after Check", d)
			}
			record(d, tr.Check(d))
		}
	}
	for _, s := range steps {
		at := base.Add(time.Duration(s.ms) * time.Millisecond)
		catchUp(at)
		switch s.kind {
		case "sweep":
			onPhase, changes := tr.Sweep(at)
			record(at, changes)
			if onPhase {
				on = append(on, s.ms)
			}
		case "blind":
			record(at, tr.Observable(at, false, "blind"))
		case "see":
			record(at, tr.Observable(at, true, ""))
		case "overflow":
			record(at, tr.Overflow(at))
		case "own":
			onPhase, changes := tr.SweepOwn(at)
			record(at, changes)
			if onPhase {
				on = append(on, s.ms)
			}
		default:
			t.Fatalf("unknown step %q", s.kind)
		}
	}
	catchUp(base.Add(time.Duration(until) * time.Millisecond))
	return got, on, tr
}

func TestTrackerScenarios(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		until int // ms: deadlines up to here are checked
		want  []string
		// final is the state at the end; next the Next of a Known phase (ms).
		final types.RelistState
		next  int
		// anyWant: the transitions on the way do not matter.
		anyWant bool
		// on, when set, is every sweep on the phase (ms).
		on []int
		// heldUp is the final phase's HeldUp (ms); -1: none, 0: not checked.
		heldUp int
		// expect is the kubelet's period the tracker is told (ms; 0: none).
		expect int
	}{
		{
			name:  "steady 2s: known at the fourth relist",
			steps: every(0, 2000, 6),
			until: 10_500, final: types.RelistKnown, next: 12_000,
			want: []string{"known(2s)@6000"},
		},
		{
			name:  "three relists are not enough",
			steps: every(0, 2000, 3),
			until: 4_500, final: types.RelistUnknown,
		},
		{
			name:  "steady 20s, the kubelet's default",
			steps: every(1_234, 20_000, 5),
			until: 81_300, final: types.RelistKnown, next: 101_234,
			want: []string{"known(20s)@61234"},
		},
		{
			name:  "jitter within the tolerance",
			steps: every(0, 2000, 8, 0, 30, -20, 25, -15, 20),
			until: 14_050, final: types.RelistKnown,
			want: []string{"known(2.008s)@6025"},
		},
		{
			name:  "jitter beyond the tolerance never qualifies one period",
			steps: every(0, 2000, 12, 0, 250, -230, 170, -260, 210, -190),
			until: 22_000, final: types.RelistUnknown,
		},
		{
			// Podwatch sees a read late when it is slow to read its
			// inotify queue, never early: a late read must not move the
			// grid, or the next read on time falls off it.
			name:  "reads seen late under load do not move the grid",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 10_060, 12_120, 14_000, 16_000, 18_000, 20_000),
			until: 20_500, final: types.RelistKnown, next: 22_000,
			want: []string{"known(2s)@6000"},
		},
		{
			// Seen more than the tolerance late, by three tolerances at
			// most, a read on a known phase is the kubelet's relist seen
			// late: on the phase, and no loss, but the grid stays.
			name:  "reads seen up to three tolerances late are on the known phase",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 10_000, 12_150, 14_220, 16_290, 18_000, 20_000),
			until: 20_500, final: types.RelistKnown, next: 22_000,
			want: []string{"known(2s)@6000"},
			on:   []int{6000, 8000, 10_000, 12_150, 14_220, 16_290, 18_000, 20_000},
		},
		{
			name:  "a read seen later than three tolerances is off the phase",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 10_350, 12_000),
			until: 12_500, final: types.RelistKnown, next: 14_000,
			want: []string{"known(2s)@6000"},
			on:   []int{6000, 8000, 12_000},
		},
		{
			// The kubelet's ticker keeps its grid and holds one tick for a
			// file source held up: it relists once, late, after the grid
			// point it missed, then on the grid again.
			name:  "a relist held up, then back on the grid: known throughout, the late one off the phase",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 11_600, 12_000, 14_000),
			until: 14_500, final: types.RelistKnown, next: 16_000,
			want:   []string{"known(2s)@6000"},
			on:     []int{6000, 8000, 12_000, 14_000},
			heldUp: 11_600,
		},
		{
			// Held up nearly a period past the tick at 10 s, the file
			// source relists just before 12 s, which the train takes
			// for the one on its grid, and again at once for the tick
			// at 12 s its ticker held: that second read is held up.
			name:  "a held-up relist just before a grid point, then its tick's at once: the second held up",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 11_950, 12_400, 14_000),
			until: 14_500, final: types.RelistKnown, next: 15_950,
			want:   []string{"known(2s)@6000"},
			on:     []int{6000, 8000, 11_950, 14_000},
			heldUp: 12_400,
		},
		{
			// Held up since its late relist at 10.49 s, the file source
			// relists for the tick at 14 s its ticker held just on the
			// grid point at 16 s, and again 30 ms later for that point's
			// tick (measured: the second read an invalid write the first
			// did not, and dropped the pod).
			name:  "a held-up relist on a grid point, then its tick's 30 ms later: the second held up",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 10_490, 16_000, 16_030, 18_000),
			until: 18_500, final: types.RelistKnown, next: 20_000,
			want:   []string{"known(2s)@6000", "unknown@14100", "known(2s)@16000"},
			on:     []int{6000, 8000, 16_000, 18_000},
			heldUp: 16_030,
		},
		{
			// The held-up relist at 10.5 s took the tick its ticker held
			// for 10 s; the one at 12 s is on time, and the kubelet reads
			// nothing more before 14 s: a read just after it, or half a
			// period after it, is another reader's.
			name:  "a read after an on-time relist that follows a held-up one: not held up",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 10_500, 12_000, 12_050, 12_500, 14_000),
			until: 14_500, final: types.RelistKnown, next: 16_000,
			want:   []string{"known(2s)@6000"},
			on:     []int{6000, 8000, 12_000, 14_000},
			heldUp: 10_500,
		},
		{
			name:  "relists held up for three periods: unknown, not lost, known again on the grid",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 11_400, 15_300, 19_200, 20_000, 22_000),
			until: 22_500, final: types.RelistKnown, next: 24_000,
			want: []string{"known(2s)@6000", "unknown@14100", "known(2s)@20000"},
			on:   []int{6000, 8000, 20_000, 22_000},
		},
		{
			name:  "held up, then no read at all: lost three periods after the last read",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 11_400),
			until: 30_000, final: types.RelistUnknown,
			want: []string{"known(2s)@6000", "unknown@14100", "lost@17500", "unknown@17500"},
		},
		{
			// Nothing held up the kubelet's ticker since its last relist:
			// a read before its next grid point is another reader's.
			name:  "a read before the next grid point does not keep a stopped phase",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 9_000),
			until: 20_000, final: types.RelistUnknown,
			want: []string{"known(2s)@6000", "lost@14100", "unknown@14100"},
		},
		{
			name:  "a second late read between two grid points does not keep it either",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 11_400, 11_800),
			until: 20_000, final: types.RelistUnknown,
			want: []string{"known(2s)@6000", "unknown@14100", "lost@17500", "unknown@17500"},
		},
		{
			// Reads every 4s, 6s, ... on the lost grid are the kubelet's,
			// not another reader's.
			name:  "after a loss, the kubelet's reads on its grid are no competing reader",
			steps: merge(every(0, 2000, 15), sweeps(34_950), every(36_000, 2000, 3)),
			until: 40_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000", "lost@34100", "unknown@34100", "known(2s)@38000"},
		},
		{
			// Late by chance 11.35s apart four times: no reader of its own.
			name: "held-up relists that happen to repeat at a period are no competing reader",
			steps: merge(every(0, 2000, 7), every(16_000, 2000, 4), every(26_000, 2000, 5),
				every(38_000, 2000, 5), sweeps(14_500, 25_850, 37_200, 48_550, 50_000, 52_000)),
			until: 52_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000"},
		},
		{
			// Before the kubelet's own train qualifies, its held-up relists
			// qualify one at 6.14s; once the 2s one qualifies, that one is
			// its shadow.
			name:  "a train of held-up relists gives way to the kubelet's own",
			steps: merge(sweeps(1_000, 7_140, 13_280, 19_420), every(20_000, 2000, 10)),
			until: 38_500, final: types.RelistKnown,
			want: []string{"known(6.14s)@19420", "known(2s)@26000"},
		},
		{
			name:  "a sweep missed keeps the phase",
			steps: sweeps(0, 2000, 4000, 6000, 8000, 12000, 14000),
			until: 14_500, final: types.RelistKnown, next: 16_000,
			want: []string{"known(2s)@6000"},
		},
		{
			name:  "another reader's full read just before a relist does not move the grid",
			steps: merge(every(0, 2000, 12), sweeps(13_900)),
			until: 22_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000"},
		},
		{
			name: "one-off full reads off the phase change nothing",
			steps: merge(every(0, 2000, 10),
				sweeps(7_300, 13_700, 13_900)),
			until: 18_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000"},
		},
		{
			name:  "a stray read 0.7s before the first relist makes no train at a fraction of the period",
			steps: merge(sweeps(-700), every(0, 2000, 8)),
			until: 14_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000"},
		},
		{
			name:  "two competing periods: unknown; known again when the other stops",
			steps: merge(every(0, 2000, 14), every(500, 3000, 5)),
			until: 26_500, final: types.RelistKnown,
			// The 3s reader's fourth read qualifies it at 9.5s; it stops
			// three periods and the tolerance after its last, 12.5s.
			want: []string{"known(2s)@6000", "unknown@9500", "known(2s)@21600"},
		},
		{
			name:  "two readers at one period, another phase: unknown",
			steps: merge(every(0, 2000, 8), every(700, 2000, 8)),
			until: 14_800, final: types.RelistUnknown,
			want: []string{"known(2s)@6000", "unknown@6700"},
		},
		{
			name:  "stopped for three periods: lost once, then unknown",
			steps: every(0, 2000, 5),
			until: 60_000, final: types.RelistUnknown,
			want: []string{"known(2s)@6000", "lost@14100", "unknown@14100"},
		},
		{
			// The kubelet's ticker keeps its grid: two reads back on the
			// lost phase's grid bring it back.
			name:  "recovery after lost, on the same grid",
			steps: merge(every(0, 2000, 5), every(30_000, 2000, 4)),
			until: 36_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000", "lost@14100", "unknown@14100", "known(2s)@32000"},
		},
		{
			name:  "recovery after lost, on another grid",
			steps: merge(every(0, 2000, 5), every(30_700, 2000, 4)),
			until: 37_000, final: types.RelistKnown,
			want: []string{"known(2s)@6000", "lost@14100", "unknown@14100", "known(2s)@36700"},
		},
		{
			// Its relists look held up on the old grid until they qualify
			// at the period: then the phase moved.
			name:  "a restart at another phase is no loss",
			steps: merge(every(0, 2000, 5), every(9_300, 2000, 5)),
			until: 17_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000", "unknown@14100", "known(2s)@15300"},
		},
		{
			name: "blind: unknown, no loss however long, known again on the phase",
			steps: merge(every(0, 2000, 5), []step{{9_000, "blind"}, {40_000, "see"}},
				sweeps(40_000)),
			until: 40_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000", "unknown@9000", "known(2s)@40000"},
		},
		{
			name:  "seen again but no relist: lost three periods after",
			steps: merge(every(0, 2000, 5), []step{{9_000, "blind"}, {40_000, "see"}}),
			until: 50_000, final: types.RelistUnknown,
			want: []string{"known(2s)@6000", "unknown@9000", "known(2s)@40000", "lost@46100", "unknown@46100"},
		},
		{
			name:  "overflow: unknown until the next relist on the phase",
			steps: merge(every(0, 2000, 6), []step{{7_000, "overflow"}}),
			until: 10_500, final: types.RelistKnown,
			want: []string{"known(2s)@6000", "unknown@7000", "known(2s)@8000"},
		},
		{
			// Measured in a loaded go of the real-kubelet suite: its file
			// source held up every 5.4 s or so, every other read fell on
			// an 11 s grid, and that phase held back for 32 s what only a
			// relist does. Told the kubelet ticks every 2 s, the tracker
			// makes no phase at their period (a read near the lost grid
			// brings that back for a moment).
			name:  "held-up reads at no period: no phase at another than the kubelet's",
			steps: merge(every(0, 2000, 5), every(16_000, 5_490, 8)),
			until: 55_000, final: types.RelistUnknown, expect: 2000,
			want: []string{"known(2s)@2000", "lost@14100", "unknown@14100", "known(2s)@37960", "unknown@44060"},
		},
		{
			// The kubelet's ticker keeps its grid to the nanosecond: reads
			// seen late while the phase is learnt must not stretch its
			// period, or the grid falls late and the relists on time (or
			// tens of milliseconds late) after it fall off it.
			name:  "told the kubelet's period: reads seen late do not put the grid late",
			steps: sweeps(0, 2100, 4100, 6100, 8000, 10_040, 12_000),
			until: 12_500, final: types.RelistKnown, expect: 2000, next: 14_000,
			want: []string{"known(2s)@2100"},
			on:   []int{2100, 4100, 6100, 8000, 10_040, 12_000},
		},
		{
			name:  "told the kubelet's period: missed ticks still make it",
			steps: sweeps(0, 4000, 6000, 8000, 10_000, 12_000),
			until: 12_500, final: types.RelistKnown, expect: 2000,
			want: []string{"known(2s)@6000"},
		},
		{
			// The first interval seen, nothing else reading: the kubelet's.
			name:  "told the kubelet's period: known at the second relist",
			steps: every(0, 2000, 4),
			until: 6_500, final: types.RelistKnown, expect: 2000, next: 8000,
			want: []string{"known(2s)@2000"},
			on:   []int{2000, 4000, 6000},
		},
		{
			name:  "told the kubelet's period: a relist alone is not enough",
			steps: every(0, 2000, 1),
			until: 1_500, final: types.RelistUnknown, expect: 2000,
		},
		{
			name:  "told the kubelet's period: an interval off it makes nothing",
			steps: sweeps(0, 2150),
			until: 2_500, final: types.RelistUnknown, expect: 2000,
		},
		{
			// A backup tool's one-off read: the kubelet's phase is left
			// to cycles until the read is out of the history.
			name:  "told the kubelet's period: another reader's read between keeps it to cycles",
			steps: merge(every(0, 2000, 5), sweeps(900)),
			until: 8_500, final: types.RelistKnown, expect: 2000,
			want: []string{"known(2s)@6000"},
		},
		{
			name:  "told the kubelet's period: podwatch's own list a period before a relist is no pair",
			steps: []step{{0, "own"}, {2000, "sweep"}, {4000, "sweep"}, {6000, "sweep"}},
			until: 6_500, final: types.RelistKnown, expect: 2000,
			want: []string{"known(2s)@4000"},
		},
		{
			// A second kubelet, or a backup tool at the kubelet's
			// period: each interval has the other's read between.
			name:  "told the kubelet's period: two readers at it, another phase: unknown",
			steps: merge(every(0, 2000, 8), every(700, 2000, 8)),
			until: 14_800, final: types.RelistUnknown, expect: 2000,
			want: []string{"known(2s)@6000", "unknown@6700"},
		},
		{
			// Held up from its start, the file source relists at no
			// period; one interval may match it by chance.
			name:  "told the kubelet's period: held up from the start, one interval at it is no phase",
			steps: sweeps(0, 700, 3300, 5300, 12_900),
			until: 13_000, final: types.RelistUnknown, expect: 2000,
		},
		{
			name:  "told the kubelet's period: after a loss, two reads on another grid are not enough",
			steps: merge(every(0, 2000, 5), every(30_700, 2000, 4)),
			until: 37_000, final: types.RelistKnown, expect: 2000,
			want: []string{"known(2s)@2000", "lost@14100", "unknown@14100", "known(2s)@36700"},
		},
		{
			name:  "told the kubelet's period: events lost before the second relist keep it to cycles",
			steps: merge(every(0, 2000, 4), []step{{1000, "overflow"}}),
			until: 6_500, final: types.RelistKnown, expect: 2000,
			want: []string{"unknown@1000", "known(2s)@6000"},
		},
		{
			name:  "told the kubelet's period: the folder not seen between two relists keeps it to cycles",
			steps: merge(every(0, 2000, 4), []step{{1000, "blind"}, {1500, "see"}}),
			until: 6_500, final: types.RelistKnown, expect: 2000,
			want: []string{"unknown@1000", "unknown@1500", "known(2s)@4000"},
		},
		{
			name:  "periods shorter than four tolerances are not looked for",
			steps: every(0, 300, 30),
			until: 9_000, final: types.RelistUnknown, anyWant: true,
		},
		{
			name:  "an hour at 20s: known once, never a multiple",
			steps: every(0, 20_000, 180, 0, 3, -2, 5, -4),
			until: 3_590_000, final: types.RelistKnown,
			want:   []string{"known(20.002s)@60005"},
			heldUp: -1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, on, tr := driveExpecting(t, DefaultTolerance, c.expect, c.steps, c.until)
			if !c.anyWant && strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("transitions\n got %v\nwant %v", got, c.want)
			}
			if c.on != nil && !slices.Equal(on, c.on) {
				t.Errorf("on the phase %v, want %v", on, c.on)
			}
			p := tr.Phase()
			if p.State != c.final {
				t.Errorf("final state %v (%s), want %v", p.State, p.Why, c.final)
			}
			if want := base.Add(time.Duration(c.heldUp) * time.Millisecond); (c.heldUp > 0 && !p.HeldUp.Equal(want)) || (c.heldUp < 0 && !p.HeldUp.IsZero()) {
				t.Errorf("HeldUp %v, want %dms (-1: none)", p.HeldUp.Sub(base), c.heldUp)
			}
			if c.next != 0 && !p.Next.Equal(base.Add(time.Duration(c.next)*time.Millisecond)) {
				t.Errorf("Next %v, want %dms", p.Next.Sub(base), c.next)
			}
			if p.State != types.RelistKnown && p.Why == "" {
				t.Errorf("a %v phase says no why", p.State)
			}
		})
	}
}

func TestTrackerOnPhase(t *testing.T) {
	steps := merge(every(0, 2000, 6), sweeps(7_300))
	_, on, _ := drive(t, DefaultTolerance, steps, 10_500)
	// The fourth relist is the one that makes the phase Known.
	if want := []int{6000, 8000, 10000}; fmt.Sprint(on) != fmt.Sprint(want) {
		t.Errorf("on the phase: %v, want %v", on, want)
	}
}

func TestTrackerWhy(t *testing.T) {
	_, _, tr := drive(t, DefaultTolerance, merge(every(0, 2000, 8), every(500, 3000, 5)), 12_000)
	if p := tr.Phase(); !strings.Contains(p.Why, "every 2s and every 3s") {
		t.Errorf("competing phases: why = %q", p.Why)
	}
	_, _, tr = drive(t, DefaultTolerance, every(0, 2000, 5), 20_000)
	if p := tr.Phase(); !strings.Contains(p.Why, "lost") || !strings.Contains(p.Why, "3 periods of 2s") {
		t.Errorf("after a loss: why = %q", p.Why)
	}
}

// A tool reading the folder every second, for ever, costs a bounded
// number of trains per read.
func TestTrackerBounded(t *testing.T) {
	tr := NewTracker(DefaultTolerance, 0)
	for i := range 5000 {
		tr.Sweep(base.Add(time.Duration(i)*time.Second + time.Duration(i*i%997)*time.Millisecond))
		if len(tr.trains) > maxTrains || len(tr.history) > maxHistory {
			t.Fatalf("after %d reads: %d trains, %d in history", i+1, len(tr.trains), len(tr.history))
		}
	}
}

func BenchmarkTrackerSweep(b *testing.B) {
	tr := NewTracker(DefaultTolerance, 0)
	at := base
	for b.Loop() {
		at = at.Add(20 * time.Second)
		tr.Sweep(at)
	}
}
