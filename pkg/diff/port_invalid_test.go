package diff

import (
	"errors"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// With no relist of the kubelet's known, the port keeps a pod whose file
// turned invalid published, and looks again a full relist period after
// the file turned: one of the kubelet's relists fell within by then.
func TestPortInvalidFileAsksARecheckAPeriodOn(t *testing.T) {
	opts := testOpts
	opts.Engine = EnginePort
	other := valid("b.yaml", pod("b", "img:1"), t0)
	_, st, recheck := Compute(State{}, snap(true, valid("a.yaml", pod("a", "img:1"), t0), other), t0.Add(time.Hour), opts)
	if !recheck.IsZero() {
		t.Fatalf("the list left a recheck at %v", recheck)
	}
	bad := types.File{Name: "a.yaml", Err: errors.New("line 7: spec.containers[0].image: Required value"), ChangedAt: t0.Add(10 * time.Second)}
	s := snap(false, bad, other)
	chs, st, recheck := Compute(st, s, t0.Add(10*time.Second), opts)
	if len(chs) != 0 || recheck.IsZero() {
		t.Fatalf("before settling: [%s] recheck %v", reasons(chs), recheck)
	}
	chs, st, recheck = Compute(st, s, recheck, opts)
	mustOne(t, chs, types.ReasonInvalid)
	if want := t0.Add(10*time.Second + opts.RelistPeriod); !recheck.Equal(want) || len(st.Pods) != 2 {
		t.Fatalf("once said invalid: recheck %v, want %v; pods %v", recheck, want, st.Pods)
	}
}
