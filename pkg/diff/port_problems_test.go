package diff

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

var portOpts = func() Options { o := testOpts; o.Engine = EnginePort; return o }()

// portPublished is s's pods published by the port engine.
func portPublished(t *testing.T, s types.Snapshot) State {
	t.Helper()
	_, st, recheck := Compute(State{}, s, t0.Add(time.Hour), portOpts)
	if !recheck.IsZero() || len(st.Pods) == 0 {
		t.Fatalf("setup: recheck %v, pods %v", recheck, st.Pods)
	}
	return st
}

// The port engine decides the pods and words the problems from its own
// model: it never builds the catalogue's kubeletView, whatever the steps.
func TestPortKeepsNoKubeletView(t *testing.T) {
	w := newTwin(t)
	w.seen = true
	check := func(what string) {
		t.Helper()
		if w.st[1].kubelet != nil {
			t.Fatalf("%s: the port engine built a kubeletView", what)
		}
		if w.st[1].port == nil {
			t.Fatalf("%s: the port engine kept no model", what)
		}
		if w.st[0].kubelet == nil {
			t.Fatalf("%s: the catalogue kept no kubeletView", what)
		}
	}
	w.step(true, nil, map[string]*types.File{"a.yaml": vfile("a", "img:1"), "b.yaml": vfile("b", "img:1")})
	check("the first list")
	w.step(false, nil, map[string]*types.File{"a.yaml": vfile("a", "img:2")})
	check("an edit")
	w.step(false, nil, map[string]*types.File{"b.yaml": {Err: errors.New("bad")}})
	check("a file turned invalid")
	w.step(true, nil, nil)
	check("a relist")
	w.step(false, nil, map[string]*types.File{"a.yaml": nil})
	check("a delete")
	if len(w.st[1].Pods) != 0 {
		t.Fatalf("the port left %v published", w.st[1].Pods)
	}
}

// A manifest turned invalid keeps its pod running until the kubelet's
// next relist: under the port, the Warning says so from the port's own
// store and mapping, in the catalogue's words.
func TestPortInvalidWords(t *testing.T) {
	other := valid("b.yaml", pod("b", "img:1"), t0)
	st := portPublished(t, snap(true, valid("a.yaml", pod("a", "img:1"), t0), other))
	bad := types.File{Name: "a.yaml", Path: "/m/a.yaml", Err: errors.New("line 7: spec.containers[0].image: Required value"), ChangedAt: t0.Add(10 * time.Second)}
	s := snap(false, bad, other)
	s.Seq, s.Time = 2, t0.Add(10*time.Second)
	chs, st, recheck := Compute(st, s, t0.Add(10*time.Second), portOpts)
	if len(chs) != 0 || recheck.IsZero() {
		t.Fatalf("before settling: [%s] recheck %v", reasons(chs), recheck)
	}
	chs, st, _ = Compute(st, s, recheck, portOpts)
	inv := mustOne(t, chs, types.ReasonInvalid)
	want := "a.yaml is invalid (line 7: image: Required value): the kubelet stops a-node-1 at its next relist, within 20s"
	detail := "a.yaml: line 7: spec.containers[0].image: Required value; the kubelet keeps running pod kube-system/a-node-1 from its last good parse and stops it at its next relist (within 20s) unless the file is fixed"
	if inv.Message != want || inv.Detail != detail {
		t.Fatalf("invalid = %q, %q\nwant %q, %q", inv.Message, inv.Detail, want, detail)
	}
	if st.kubelet != nil || len(st.Pods) != 2 {
		t.Fatalf("kubeletView %v, pods %v: the port runs a's last good parse", st.kubelet, st.Pods)
	}
}

// A file turned invalid whose pod the kubelet's store holds from another
// file (the last in name order, at a relist) stops nothing: the port's
// store says so, and the Warning has no word of a stop.
func TestPortInvalidShadowedWords(t *testing.T) {
	a, a2 := valid("a.yaml", pod("a", "img:1"), t0), valid("a2.yaml", pod("a", "img:2"), t0)
	st := portPublished(t, snap(true, a, a2))
	if p := st.Pods["kube-system/a-node-1"]; p == nil || p.File != "a2.yaml" {
		t.Fatalf("published %v, want a's pod from a2.yaml", st.Pods)
	}
	bad := types.File{Name: "a.yaml", Path: "/m/a.yaml", Err: errors.New("line 7: spec.containers[0].image: Required value"), ChangedAt: t0.Add(10 * time.Second)}
	s := snap(false, bad, a2)
	s.Seq, s.Time = 2, t0.Add(10*time.Second)
	_, st, recheck := Compute(st, s, t0.Add(10*time.Second), portOpts)
	chs, _, _ := Compute(st, s, recheck, portOpts)
	inv := mustOne(t, chs, types.ReasonInvalid)
	if want := "a.yaml is invalid (line 7: image: Required value)"; inv.Message != want || strings.Contains(inv.Detail, "stops") {
		t.Fatalf("invalid = %q, %q; want %q and no stop", inv.Message, inv.Detail, want)
	}
}

// vfile is a valid file of name's pod at image, for folder.change.
func vfile(name, image string) *types.File {
	f := valid("", pod(name, image), t0)
	return &f
}
