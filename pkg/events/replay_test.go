package events

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// podChange is a change occurrence of the pod web, with its change ID.
func podChange(msg, change string) Occurrence {
	return Occurrence{Object: PodRef("kube-system", "web-node-1"), Type: v1.EventTypeNormal,
		Reason: "StaticPodUpdated", Message: msg, Change: change}
}

// firstRun records os with a delivered sink, as the agent before a crash,
// and returns what that sink holds: the newest write of each Event.
func firstRun(t *testing.T, os ...Occurrence) []v1.Event {
	t.Helper()
	st := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{DeliverTo("store", st)}, nil)
	for _, o := range os {
		mustRecord(t, r, o)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	byName := map[string]v1.Event{}
	var order []string
	for _, w := range st.got() {
		if _, ok := byName[w.ev.Name]; !ok {
			order = append(order, w.ev.Name)
		}
		byName[w.ev.Name] = *w.ev
	}
	out := make([]v1.Event, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out
}

// restarted is a Recorder restored from evs, with a stream and a delivered
// sink, as the agent after the restart.
func restarted(t *testing.T, evs []v1.Event) (*Recorder, *fakeSink, *fakeSink) {
	t.Helper()
	out, st := &fakeSink{}, &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out), DeliverTo("store", st)}, evs)
	return r, out, st
}

// countOf is the count of the newest write with message msg.
func countOf(t *testing.T, s *fakeSink, msg string) (int32, string) {
	t.Helper()
	ws := s.got()
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].ev.Message == msg {
			return ws[i].ev.Count, ws[i].ev.Name
		}
	}
	t.Fatalf("no write of %q in %d writes", msg, len(ws))
	return 0, ""
}

func TestReplayOfTheLastChangeIsNotCountedAgain(t *testing.T) {
	ab := podChange("web.yaml: image: a -> b", "id-b")
	stored := firstRun(t, ab)
	if got := stored[0].Annotations[AnnotationChange]; got != "1/id-b" {
		t.Fatalf("stored Event's %s = %q, want 1/id-b", AnnotationChange, got)
	}

	r, out, st := restarted(t, stored)
	mustRecord(t, r, ab) // the restart recomputes the change
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, name := countOf(t, st, ab.Message); n != 1 || name != stored[0].Name {
		t.Fatalf("store after the replay: %s x%d, want %s x1", name, n, stored[0].Name)
	}
	if n, _ := countOf(t, out, ab.Message); n != 1 {
		t.Fatalf("stdout printed the replay at count %d, want 1 (printed again, not counted)", n)
	}
	if st := r.Stats(); st.Replayed != 1 || st.Recorded != 1 {
		t.Fatalf("stats %+v, want one occurrence, replayed", st)
	}
	checkBalance(t, r, "store")

	// Real changes after it count, the same edit again too: a -> b -> a -> b.
	ba := podChange("web.yaml: image: b -> a", "id-a")
	mustRecord(t, r, ba)
	mustRecord(t, r, ab)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := countOf(t, st, ab.Message); n != 2 {
		t.Fatalf("a -> b done again for real: count %d, want 2", n)
	}
	if n, _ := countOf(t, st, ba.Message); n != 1 {
		t.Fatalf("b -> a: count %d, want 1", n)
	}
	if got := r.Stats().Replayed; got != 1 {
		t.Fatalf("replayed %d, want only the first", got)
	}
}

func TestReplayIsJudgedByThePodsLastChange(t *testing.T) {
	// a -> b, then b -> a, both counted before the crash: the pod's last
	// change is b -> a, so an a -> b after the restart is a real one.
	ab, ba := podChange("web.yaml: image: a -> b", "id-b"), podChange("web.yaml: image: b -> a", "id-a")
	stored := firstRun(t, ab, ba)
	// Restored in either order: the sequence in the annotation decides.
	for _, evs := range [][]v1.Event{stored, {stored[1], stored[0]}} {
		r, _, st := restarted(t, evs)
		mustRecord(t, r, ab)
		if err := r.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n, _ := countOf(t, st, ab.Message); n != 2 {
			t.Fatalf("a -> b after a restart whose last change was b -> a: count %d, want 2", n)
		}
		if got := r.Stats().Replayed; got != 0 {
			t.Fatalf("replayed %d, want 0", got)
		}
	}
}

func TestForgetReplaysCountsTheNextChange(t *testing.T) {
	ab := podChange("web.yaml: image: a -> b", "id-b")
	stored := firstRun(t, ab)
	r, _, st := restarted(t, stored)
	var asked []string
	r.ForgetReplays(func(obj v1.ObjectReference) bool {
		asked = append(asked, obj.Kind+" "+obj.Namespace+"/"+obj.Name)
		return false
	})
	if len(asked) != 1 || asked[0] != "Pod kube-system/web-node-1" {
		t.Fatalf("ForgetReplays asked about %v, want the pod", asked)
	}
	mustRecord(t, r, ab)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := countOf(t, st, ab.Message); n != 2 {
		t.Fatalf("after ForgetReplays: count %d, want 2", n)
	}
}

func TestReplayNeedsTheMark(t *testing.T) {
	ab := podChange("web.yaml: image: a -> b", "id-b")
	stored := firstRun(t, ab)
	for name, mark := range map[string]string{"absent (an older store)": "", "damaged": "x/id-b", "no change": "1/"} {
		evs := []v1.Event{*stored[0].DeepCopy()}
		if mark == "" {
			delete(evs[0].Annotations, AnnotationChange)
		} else {
			evs[0].Annotations[AnnotationChange] = mark
		}
		r, _, st := restarted(t, evs)
		mustRecord(t, r, ab)
		if err := r.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n, _ := countOf(t, st, ab.Message); n != 2 {
			t.Errorf("mark %s: count %d, want 2 (counted: at least once)", name, n)
		}
	}
}

func TestChangeSequenceContinuesAfterRestore(t *testing.T) {
	stored := firstRun(t, podChange("m1", "id-1"), podChange("m2", "id-2"))
	r, _, st := restarted(t, stored)
	mustRecord(t, r, podChange("m3", "id-3"))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws := st.got()
	if got := ws[len(ws)-1].ev.Annotations[AnnotationChange]; got != "3/id-3" {
		t.Fatalf("mark after restore %q, want 3/id-3", got)
	}
	// A problem carries no mark.
	mustRecord(t, r, occ("InvalidManifest", "bad"))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws = st.got()
	if _, ok := ws[len(ws)-1].ev.Annotations[AnnotationChange]; ok {
		t.Fatalf("a problem's Event carries %s", AnnotationChange)
	}
}
