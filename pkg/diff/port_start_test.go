package diff

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// Files found at the start and not known complete are ways of their own
// (maybe partly written when the kubelet read them) until they settle;
// then the kubelet's watch has read them whole, and the start window is
// folded, not carried until it is folded by force. A file that changed
// since the start list keeps its ways.
func TestPortStartSettles(t *testing.T) {
	opts := testOpts
	fresh := func(name string, changed time.Time) types.File {
		f := valid(name, pod(name[:1], "img:1"), changed)
		f.Complete = false
		return f
	}
	a, b := fresh("a.yaml", t0), fresh("b.yaml", t0)
	var st State
	s := snap(true, a, b)
	s.Seq = 1
	chs, recheck := Advance(&st, s, t0, opts)
	if podOps(chs) != "" || recheck.IsZero() {
		t.Fatalf("at the list: said %q, recheck %v; want nothing said yet and a recheck", podOps(chs), recheck)
	}
	if n := len(st.port.tl.Inputs()); n != 1 {
		t.Fatalf("before settling the window holds %d inputs, want the start list", n)
	}
	for _, f := range st.port.tl.Inputs()[0].Relist.Files {
		if len(f.Reads) < 2 {
			t.Errorf("%s read one way before it settled", f.Path)
		}
	}
	// b.yaml changed since the start list: not settled at the recheck.
	b2 := fresh("b.yaml", t0.Add(opts.SettleDelay/2))
	s = snap(false, a, b2)
	s.Seq, s.Time = 2, t0.Add(opts.SettleDelay/2)
	s.Events = []types.WatchEvent{{Name: "b.yaml"}}
	Advance(&st, s, s.Time, opts)
	chs, _ = Advance(&st, s, t0.Add(opts.SettleDelay), opts)
	if got := podOps(chs); got != "ADD a.yaml" {
		t.Errorf("once a.yaml settled: said %q, want ADD a.yaml", got)
	}
	in := st.port.tl.Inputs()
	if len(in) == 0 {
		t.Fatal("the window was folded while b.yaml, changed since the list, has not settled")
	}
	for _, f := range in[0].Relist.Files {
		if want := map[bool]int{true: 1, false: 2}[f.Path == "/m/a.yaml"]; len(f.Reads) != want && !(want == 2 && len(f.Reads) > 2) {
			t.Errorf("%s: %d reads, want %d", f.Path, len(f.Reads), want)
		}
	}
	chs, _ = Advance(&st, s, t0.Add(opts.SettleDelay*2), opts)
	if got := podOps(chs); got != "ADD b.yaml" {
		t.Errorf("once b.yaml settled: said %q, want ADD b.yaml", got)
	}
}

// A start list of files all quiet since is folded once they settle: the
// steps after it explore what they change, not the whole folder.
func TestPortStartFoldsOnceSettled(t *testing.T) {
	opts := testOpts
	var files []types.File
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		f := valid(name, pod(name[:1], "img:1"), t0)
		f.Complete = false
		files = append(files, f)
	}
	var st State
	s := snap(true, files...)
	s.Seq = 1
	_, recheck := Advance(&st, s, t0, opts)
	if n := len(st.port.tl.Inputs()); n != 1 {
		t.Fatalf("before settling the window holds %d inputs, want the start list", n)
	}
	chs, _ := Advance(&st, s, recheck, opts)
	if got := podOps(chs); got != "ADD a.yaml, ADD b.yaml, ADD c.yaml" {
		t.Errorf("once settled: said %q", got)
	}
	if n := len(st.port.tl.Inputs()); n != 0 {
		t.Errorf("once settled the window holds %d inputs, want it folded", n)
	}
}
