package follow

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// What the follower waits for is in its log, once each time it changes:
// a change it never says done must say why, without a line every poll.
func TestWhatItWaitsForIsLoggedWhenItChanges(t *testing.T) {
	var log bytes.Buffer
	h := &harness{t: t, clk: testingclock.NewFakeClock(t0), rt: newFakeRuntime(), out: &emitted{}, obs: &observations{}}
	h.f = New(Options{Deadline: deadline}, h.rt, h.clk, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})), h.out.emit, h.obs, nil)
	h.submit(types.OpAdd, 0, apiPod(""))
	none(t, h.at(time.Second))
	none(t, h.at(2*time.Second))
	h.rt.sandbox("sb1", apiserver, "uid-1", t0.Add(2500*time.Millisecond), true)
	none(t, h.at(3*time.Second))
	none(t, h.at(4*time.Second))
	text := log.String()
	if n := strings.Count(text, `msg="following a change" pod=kube-system/`+apiserver+" op=ADD"); n != 1 {
		t.Errorf("%d lines of the change followed, want 1:\n%s", n, text)
	}
	for _, seen := range []string{"no sandbox created since the change", "container kube-apiserver not created"} {
		if n := strings.Count(text, `msg="change not seen done yet" pod=kube-system/`+apiserver); n != 2 || !strings.Contains(text, seen) {
			t.Errorf("want 2 lines of what it saw, one with %q:\n%s", seen, text)
		}
	}
}
