package kube

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// running is a Sink's Run on a fake clock, reporting each time it goes to
// sleep and until when.
type running struct {
	s      *Sink
	clk    *clocktesting.FakeClock
	rounds chan time.Time
	cancel context.CancelFunc
	done   chan error
}

// startRun runs s.Run until the test ends, and waits for its first sleep,
// with nothing to look for.
func startRun(t *testing.T, s *Sink) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{s: s, clk: s.clk.(*clocktesting.FakeClock), rounds: make(chan time.Time, 8), cancel: cancel, done: make(chan error, 1)}
	s.waiting = func(next time.Time) {
		select {
		case r.rounds <- next:
		case <-ctx.Done():
		}
	}
	go func() { r.done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	if next := r.sleep(t); !next.IsZero() {
		t.Fatalf("Run's first sleep is until %v, want no timer", next)
	}
	return r
}

// sleep waits until Run sleeps again, and returns until when.
func (r *running) sleep(t *testing.T) time.Time {
	t.Helper()
	select {
	case next := <-r.rounds:
		return next
	case err := <-r.done:
		t.Fatalf("Run returned %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not go back to sleep within 10s")
	}
	return time.Time{}
}

// stepTo moves the clock to next, when Run's timer fires, and returns
// when Run sleeps again after its look.
func (r *running) stepTo(t *testing.T, next time.Time) time.Time {
	t.Helper()
	r.clk.SetTime(next)
	return r.sleep(t)
}

// count counts the fake API's requests with verb on resource.
func count(cs *fake.Clientset, verb, resource string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

// movePatches are the bodies of the patches that set an Event's
// involvedObject.uid.
func movePatches(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	var out []string
	for _, a := range cs.Actions() {
		p, ok := a.(clienttesting.PatchAction)
		if !ok || !strings.Contains(string(p.GetPatch()), "involvedObject") {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			t.Fatal(err)
		}
		if len(body) != 1 {
			t.Errorf("move patch %s sets more than involvedObject", p.GetPatch())
		}
		out = append(out, p.GetName()+" "+string(p.GetPatchType())+" "+string(p.GetPatch()))
	}
	return out
}

// A StaticPodUpdated is written at once on the old mirror pod's uid, so
// `kubectl describe` of the old pod shows it while the restart is stuck;
// once the kubelet replaces the mirror pod, Run moves it to the new one
// with a merge patch of involvedObject.uid, at its next look: the first a
// second after the write, the next a second later.
func TestUpdateWrittenAtOnceThenMovedToTheNewMirrorPod(t *testing.T) {
	old := mirrorCreatedAt("hash1", t0.Add(-time.Hour))
	s, cs, _ := newTestSink(t, old)
	r := startRun(t, s)
	ctx := context.Background()
	r.clk.Step(time.Second)
	up := change("e.20", types.ReasonUpdated, r.clk.Now())
	if err := s.Write(ctx, up, false); err != nil {
		t.Fatalf("write before the new mirror pod: %v, want it written", err)
	}
	if got := getEvent(t, cs, "kube-system", "e.20"); got.InvolvedObject.UID != "hash1" {
		t.Fatalf("written with uid %q, want hash1, the old mirror pod's", got.InvolvedObject.UID)
	}
	next := r.sleep(t)
	if d := next.Sub(r.clk.Now()); d != time.Second {
		t.Fatalf("first look %v after the write, want 1s", d)
	}
	next = r.stepTo(t, next)
	if got := getEvent(t, cs, "kube-system", "e.20"); got.InvolvedObject.UID != "hash1" {
		t.Fatalf("moved to %q with the old mirror pod still there", got.InvolvedObject.UID)
	}
	if n := count(cs, "get", "pods"); n != 2 {
		t.Fatalf("%d mirror pod reads after the first look, want 2 (the write's and the look's)", n)
	}
	if err := cs.CoreV1().Pods("kube-system").Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, mirrorCreatedAt("hash2", r.clk.Now()), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := next.Sub(r.clk.Now()); d != time.Second {
		t.Fatalf("second look %v after the first, want 1s", d)
	}
	if next = r.stepTo(t, next); !next.IsZero() {
		t.Errorf("Run looks again at %v after the move, want nothing left to look for", next)
	}
	if got := getEvent(t, cs, "kube-system", "e.20"); got.InvolvedObject.UID != "hash2" {
		t.Errorf("uid = %q after the new mirror pod appeared, want hash2", got.InvolvedObject.UID)
	}
	want := `e.20 application/merge-patch+json {"involvedObject":{"uid":"hash2"}}`
	if got := movePatches(t, cs); len(got) != 1 || got[0] != want {
		t.Errorf("move patches %q, want one: %s", got, want)
	}
	// Later Events about the pod carry the new hash without a read.
	gets := count(cs, "get", "pods")
	started := podEvent("e.21", 1)
	started.FirstTimestamp = metav1.NewTime(r.clk.Now())
	if err := s.Write(ctx, started, false); err != nil {
		t.Fatal(err)
	}
	if got := getEvent(t, cs, "kube-system", "e.21"); got.InvolvedObject.UID != "hash2" || count(cs, "get", "pods") != gets {
		t.Errorf("next Event's uid = %q with %d reads, want hash2 with none", got.InvolvedObject.UID, count(cs, "get", "pods")-gets)
	}
}

// A StaticPodAdded found no mirror pod: it is written at once without a
// uid, and moved to the mirror pod once the kubelet has made it. A
// StaticPodFound (a first start, maybe a boot) is treated alike.
func TestAddWrittenWithoutUIDThenMoved(t *testing.T) {
	for _, reason := range []string{types.ReasonAdded, types.ReasonFound} {
		t.Run(reason, func(t *testing.T) {
			s, cs, _ := newTestSink(t)
			r := startRun(t, s)
			ctx := context.Background()
			if err := s.Write(ctx, change("e.22", reason, t0), false); err != nil {
				t.Fatalf("write before the mirror pod: %v, want it written", err)
			}
			if got := getEvent(t, cs, "kube-system", "e.22"); got.InvolvedObject.UID != "" {
				t.Fatalf("written with uid %q, want none", got.InvolvedObject.UID)
			}
			next := r.sleep(t)
			for range 3 {
				next = r.stepTo(t, next)
			}
			if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, mirrorPod("hash1"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if next = r.stepTo(t, next); !next.IsZero() {
				t.Errorf("Run looks again at %v after the move", next)
			}
			if got := getEvent(t, cs, "kube-system", "e.22"); got.InvolvedObject.UID != "hash1" {
				t.Errorf("uid = %q, want hash1", got.InvolvedObject.UID)
			}
		})
	}
}

// With no new mirror pod (a stuck restart; a kubelet without an API
// server) Run looks at growing gaps, never more than mirrorRecheck apart,
// and gives up at the bound: MirrorWait while the old mirror pod is
// there, addedWait when there is none. The Event stays where it was
// written, and giving up is logged.
func TestMoveGivesUpAtTheMirrorWait(t *testing.T) {
	for _, tc := range []struct {
		reason string
		old    bool // the old mirror pod is there
		bound  time.Duration
		uid    string
	}{
		{types.ReasonUpdated, true, DefaultMirrorWait, "hash1"},
		{types.ReasonUpdated, false, addedWait, ""},
		{types.ReasonAdded, false, addedWait, ""},
	} {
		t.Run(tc.reason+"/"+tc.uid, func(t *testing.T) {
			var s *Sink
			var cs *fake.Clientset
			var lb interface{ String() string }
			if tc.old {
				s, cs, lb = newTestSink(t, mirrorCreatedAt("hash1", t0.Add(-time.Hour)))
			} else {
				s, cs, lb = newTestSink(t)
			}
			r := startRun(t, s)
			if err := s.Write(context.Background(), change("e.23", tc.reason, t0.Add(-time.Second)), false); err != nil {
				t.Fatal(err)
			}
			var looks []time.Duration
			for next := r.sleep(t); !next.IsZero(); next = r.stepTo(t, next) {
				looks = append(looks, next.Sub(t0))
				if len(looks) > 100 {
					t.Fatalf("Run looks on and on: %v", looks)
				}
			}
			if looks[0] != firstLook || looks[len(looks)-1] != tc.bound {
				t.Errorf("looks at %v; want the first at %v, the last at %v", looks, firstLook, tc.bound)
			}
			for i := 1; i < len(looks); i++ {
				gap, prev := looks[i]-looks[i-1], time.Duration(0)
				if i > 1 {
					prev = looks[i-1] - looks[i-2]
				}
				if gap > mirrorRecheck || (gap < prev && i < len(looks)-1) {
					t.Errorf("gap %v after %v (looks at %v): want growing gaps up to %v", gap, prev, looks, mirrorRecheck)
				}
			}
			if n := count(cs, "get", "pods"); n != 1+len(looks) {
				t.Errorf("%d mirror pod reads, want %d: the write's and one per look", n, 1+len(looks))
			}
			if got := getEvent(t, cs, "kube-system", "e.23"); string(got.InvolvedObject.UID) != tc.uid || len(movePatches(t, cs)) != 0 {
				t.Errorf("uid = %q after giving up, %d moves; want %q, none", got.InvolvedObject.UID, len(movePatches(t, cs)), tc.uid)
			}
			if !strings.Contains(lb.String(), "no new mirror pod") {
				t.Errorf("giving up was not logged:\n%s", lb.String())
			}
			t.Logf("%d looks at %v", len(looks), looks)
		})
	}
}

// MirrorWait < 0 writes as before and moves nothing.
func TestNegativeMirrorWaitMovesNothing(t *testing.T) {
	cs := fake.NewClientset(mirrorCreatedAt("hash1", t0.Add(-time.Hour)))
	s, err := NewSink(typed{cs.CoreV1()}, SinkOptions{Node: node, MirrorWait: -1}, clocktesting.NewFakeClock(t0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), change("e.24", types.ReasonUpdated, t0), false); err != nil {
		t.Fatal(err)
	}
	if got := getEvent(t, cs, "kube-system", "e.24"); got.InvolvedObject.UID != "hash1" {
		t.Errorf("uid = %q, want hash1", got.InvolvedObject.UID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.moves) != 0 || len(s.wake) != 0 {
		t.Errorf("%d moves for Run, wake-up %d; want none", len(s.moves), len(s.wake))
	}
}

// Run ends when its context does, and only one Run goes at a time.
func TestRunEndsWithItsContext(t *testing.T) {
	s, _, _ := newTestSink(t)
	r := startRun(t, s)
	if err := s.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
	// Run sleeps on a timer for a move; cancel ends it all the same.
	if err := s.Write(context.Background(), change("e.25", types.ReasonAdded, t0), false); err != nil {
		t.Fatal(err)
	}
	if next := r.sleep(t); next.IsZero() {
		t.Fatal("Run has no timer for the move")
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run returned %v on cancel, want nil", err)
		}
		r.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of its context's end")
	}
}

// Two changes of one pod waiting for its new mirror pod (an edit and its
// quick fix) cost one read per look, and both move when it appears.
func TestOneReadPerPodAndLook(t *testing.T) {
	old := mirrorCreatedAt("hash1", t0.Add(-time.Hour))
	s, cs, _ := newTestSink(t, old)
	r := startRun(t, s)
	ctx := context.Background()
	var next time.Time
	for _, name := range []string{"e.26", "e.27"} {
		if err := s.Write(ctx, change(name, types.ReasonUpdated, t0), false); err != nil {
			t.Fatal(err)
		}
		next = r.sleep(t)
	}
	gets := count(cs, "get", "pods")
	if next = r.stepTo(t, next); count(cs, "get", "pods") != gets+1 {
		t.Fatalf("%d reads in one look, want 1", count(cs, "get", "pods")-gets)
	}
	if err := cs.CoreV1().Pods("kube-system").Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, mirrorCreatedAt("hash2", r.clk.Now()), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gets = count(cs, "get", "pods")
	if next = r.stepTo(t, next); !next.IsZero() || count(cs, "get", "pods") != gets+1 {
		t.Fatalf("next look %v, %d reads; want none left, 1 read", next, count(cs, "get", "pods")-gets)
	}
	for _, name := range []string{"e.26", "e.27"} {
		if got := getEvent(t, cs, "kube-system", name); got.InvolvedObject.UID != "hash2" {
			t.Errorf("%s: uid = %q, want hash2", name, got.InvolvedObject.UID)
		}
	}
}
