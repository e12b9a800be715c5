package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// twin feeds one folder's snapshots, numbered and naming what changed as
// the file source's do, to both engines, each with its own State.
type twin struct {
	t  *testing.T
	st [2]State
	folder
	// seen makes each relist the kubelet's, seen.
	seen bool
	// steps are what each engine said, step by step.
	steps [][2][]types.Change
}

var engines = [2]Engine{EngineCatalogue, EnginePort}

func newTwin(t *testing.T) *twin {
	return &twin{t: t, folder: newFolder()}
}

// step changes the named files (nil deletes) with the events given (nil:
// none known) and advances both engines through every recheck.
func (w *twin) step(relist bool, events []types.WatchEvent, change map[string]*types.File) {
	changed := w.change(change)
	s := types.Snapshot{Time: w.now, Seq: w.seq, Relist: relist, Path: "/m", Watch: types.WatchStatus{Up: true}}
	if !relist {
		s.Changed, s.Events = changed, events
	}
	if relist && w.seen {
		s.KubeletRelist = w.now
	}
	for _, name := range slices.Sorted(maps.Keys(w.files)) {
		s.Files = append(s.Files, w.files[name])
	}
	var got [2][]types.Change
	for i, e := range engines {
		opts := testOpts
		opts.Engine = e
		chs, recheck := Advance(&w.st[i], s, w.now, opts)
		for !recheck.IsZero() {
			var more []types.Change
			more, recheck = Advance(&w.st[i], s, recheck, opts)
			chs = append(chs, more...)
		}
		got[i] = chs
	}
	w.steps = append(w.steps, got)
}

// said is a step's pod changes with their claims, for comparison.
func said(chs []types.Change) string {
	var out []string
	for _, c := range chs {
		if c.Op == "" || c.Claim == nil {
			continue
		}
		cl := c.Claim
		mx := "null"
		if cl.Before.Max != nil {
			mx = fmt.Sprint(*cl.Before.Max)
		}
		s := fmt.Sprintf("%s %s {%d,%s}", c.Op, c.File, cl.Before.Min, mx)
		if cl.MaySkip {
			s += " maySkip"
		}
		if cl.After.Max > 0 {
			s += fmt.Sprintf(" after%d", cl.After.Max)
		}
		if cl.At == types.ClaimAtRelist {
			s += " @relist"
		}
		if cl.Estimate {
			s += " est"
		}
		if cl.Capped {
			s += " capped"
		}
		if cl.Folded {
			s += " folded"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// opsOf is a step's pod ops alone.
func opsOf(chs []types.Change) string { return podOps(chs) }

// compareCase is one snapshot sequence played through both engines.
type compareCase struct {
	name string
	// plain: the engines must say the same ops at every step.
	plain bool
	play  func(w *twin)
}

func compareCases() []compareCase {
	v1f, v2 := valid("", pod("web", "img:1"), t0), valid("", pod("web", "img:2"), t0)
	bak := valid("", pod("web", "img:bak"), t0)
	other := valid("", pod("x", "img:1"), t0)
	invalid := types.File{Err: errString("yaml: line 3: mapping values are not allowed here")}
	ev := func(names ...string) []types.WatchEvent {
		var out []types.WatchEvent
		for _, n := range names {
			if g, ok := strings.CutPrefix(n, "-"); ok {
				out = append(out, evGone(g))
			} else {
				out = append(out, evWrote(n))
			}
		}
		return out
	}
	seed := func(w *twin) { w.step(true, nil, map[string]*types.File{"web.yaml": &v1f}) }
	return []compareCase{
		{"add", true, func(w *twin) {
			w.step(true, nil, nil)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v1f})
		}},
		{"edit", true, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v2})
		}},
		{"edit-no-events", true, func(w *twin) {
			seed(w)
			w.step(false, nil, map[string]*types.File{"web.yaml": &v2})
		}},
		{"remove", true, func(w *twin) {
			seed(w)
			w.step(false, ev("-web.yaml"), map[string]*types.File{"web.yaml": nil})
		}},
		{"rename", true, func(w *twin) {
			seed(w)
			w.step(false, ev("-web.yaml", "x.yaml"), map[string]*types.File{"web.yaml": nil, "x.yaml": &v1f})
		}},
		{"second-pod", true, func(w *twin) {
			seed(w)
			w.step(false, ev("x.yaml"), map[string]*types.File{"x.yaml": &other})
			w.step(false, ev("-x.yaml"), map[string]*types.File{"x.yaml": nil})
		}},
		{"bak-shadows-at-relist", true, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml.bak"), map[string]*types.File{"web.yaml.bak": &bak})
			w.step(true, nil, nil)
		}},
		{"bak-copy-then-edit", true, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml.bak"), map[string]*types.File{"web.yaml.bak": &v1f})
			w.step(true, nil, nil)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v2})
		}},
		{"chmod", true, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v1f})
		}},
		{"emacs-save", false, func(w *twin) {
			seed(w)
			w.step(false, ev("-web.yaml", "web.yaml~", "web.yaml"), map[string]*types.File{"web.yaml": &v2, "web.yaml~": &v1f})
			w.step(true, nil, nil)
		}},
		{"vim-save", false, func(w *twin) {
			seed(w)
			w.step(false, ev("-web.yaml", "web.yaml~", "web.yaml", "-web.yaml~"), map[string]*types.File{"web.yaml": &v2})
		}},
		{"sed-temp", false, func(w *twin) {
			seed(w)
			w.step(false, ev("sedX", "-sedX", "web.yaml"), map[string]*types.File{"web.yaml": &v2})
		}},
		{"invalid-then-relist", false, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &invalid})
			w.step(true, nil, nil)
		}},
		{"invalid-then-fixed", false, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &invalid})
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v2})
		}},
		{"invalid-relist-fixed", false, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &invalid})
			w.step(true, nil, nil)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v2})
		}},
		{"empty-relist-revive", false, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &invalid})
			w.step(true, nil, nil)
			w.step(false, ev("x.yaml"), map[string]*types.File{"x.yaml": &other})
		}},
		{"delete-drops-shadow", false, func(w *twin) {
			seed(w)
			w.step(false, ev("web.yaml.bak"), map[string]*types.File{"web.yaml.bak": &bak})
			w.step(false, ev("-web.yaml.bak"), map[string]*types.File{"web.yaml.bak": nil})
			w.step(true, nil, nil)
		}},
		{"kubelet-relist-seen", false, func(w *twin) {
			w.seen = true
			seed(w)
			w.step(false, ev("web.yaml"), map[string]*types.File{"web.yaml": &v2})
			w.step(true, nil, nil)
		}},
	}
}

// TestEnginesSideBySide plays each sequence through both engines and
// reports, step by step, whether their pod changes and claims agree. On
// the plain cases the port's ops must be the catalogue's.
func TestEnginesSideBySide(t *testing.T) {
	var table []string
	for _, tc := range compareCases() {
		w := newTwin(t)
		tc.play(w)
		opsAgree, claimsAgree := true, true
		var diffs []string
		for i, st := range w.steps {
			if opsOf(st[0]) != opsOf(st[1]) {
				opsAgree = false
			}
			if said(st[0]) != said(st[1]) {
				claimsAgree = false
				diffs = append(diffs, fmt.Sprintf("  step %d: catalogue [%s] port [%s]", i, said(st[0]), said(st[1])))
			}
		}
		table = append(table, fmt.Sprintf("%-24s ops %-5v claims %-5v", tc.name, opsAgree, claimsAgree))
		table = append(table, diffs...)
		if tc.plain && !opsAgree {
			for i, st := range w.steps {
				t.Errorf("%s step %d: catalogue [%s], port [%s]", tc.name, i, opsOf(st[0]), opsOf(st[1]))
			}
		}
	}
	t.Log("engines side by side:\n" + strings.Join(table, "\n"))
}

// The switch: an unknown engine is an error, none is the catalogue.
func TestParseEngine(t *testing.T) {
	for in, want := range map[string]Engine{"": defaultEngine, "catalogue": EngineCatalogue, "port": EnginePort} {
		if got, err := ParseEngine(in); err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseEngine("race"); err == nil {
		t.Error("ParseEngine(race): no error")
	}
}
