package diff

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

var portOpts = testOpts

// portPublished is s's pods published by the port engine.
func portPublished(t *testing.T, s types.Snapshot) State {
	t.Helper()
	_, st, recheck := Compute(State{}, s, t0.Add(time.Hour), portOpts)
	if !recheck.IsZero() || len(st.Pods) == 0 {
		t.Fatalf("setup: recheck %v, pods %v", recheck, st.Pods)
	}
	return st
}

// A manifest turned invalid keeps its pod running until the kubelet's
// next relist: under the port, the Warning says so from the port's own
// store and mapping.
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
	if len(st.Pods) != 2 {
		t.Fatalf("pods %v: the port runs a's last good parse", st.Pods)
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
