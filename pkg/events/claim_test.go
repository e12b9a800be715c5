package events

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// claimOn decodes ev's AnnotationClaim, failing the test without one.
func claimOn(t *testing.T, ev *v1.Event) types.Claim {
	t.Helper()
	raw, ok := ev.Annotations[AnnotationClaim]
	if !ok {
		t.Fatalf("%s has no %s: %v", ev.Name, AnnotationClaim, ev.Annotations)
	}
	var c types.Claim
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("%s %s %q: %v", ev.Name, AnnotationClaim, raw, err)
	}
	return c
}

// Each occurrence's write carries its own claim, an Event counted again
// the latest one, and an occurrence with none (a problem) carries none.
func TestEventCarriesTheLatestClaim(t *testing.T) {
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	o := update("a>b", "x.yaml: image a -> b")
	o.Claim = &types.Claim{ID: 7, Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Bounded(0, 1)}
	mustRecord(t, r, o)
	o.Claim = &types.Claim{ID: 9, Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Range{}, MaySkip: true}
	mustRecord(t, r, o)
	got := out.got()
	if len(got) != 2 || got[0].ev.Name != got[1].ev.Name {
		t.Fatalf("%d writes, want two of one Event", len(got))
	}
	if c := claimOn(t, got[0].ev); c.ID != 7 || c.Before.Max == nil || *c.Before.Max != 1 {
		t.Errorf("first write claims %+v, want 7 with before at most 1", c)
	}
	if c := claimOn(t, got[1].ev); c.ID != 9 || c.Before.Max != nil || !c.MaySkip {
		t.Errorf("second write claims %+v, want 9, unbounded, may skip", c)
	}
	mustRecord(t, r, Occurrence{Object: NodeRef("node-1"), Type: "Warning", Reason: types.ReasonInvalid, File: "x.yaml", Message: "x.yaml: bad"})
	if ev := out.got()[2].ev; ev.Annotations[AnnotationClaim] != "" {
		t.Errorf("a problem carries a claim: %v", ev.Annotations)
	}
}

// A restored Event keeps its claim until an occurrence brings another.
func TestRestoredEventKeepsItsClaim(t *testing.T) {
	o := update("a>b", "x.yaml: image a -> b")
	prev := stored(o, "web-node-1.1", 3, t0.Add(-5*time.Minute), t0.Add(-time.Minute))
	prev.Annotations = map[string]string{AnnotationKey: "a>b", AnnotationClaim: `{"id":4,"op":"UPDATE","at":"watch","before":{"min":0,"max":0},"maySkip":false,"after":{"max":0}}`}
	r, _ := newTest(t, Options{}, nil, []v1.Event{prev})
	e, ok := r.events.get(plainKey(groupKeyOf(&o), &o), t0)
	if !ok {
		t.Fatal("the stored Event is not restored")
	}
	if c := claimOn(t, e.event("node-1")); c.ID != 4 {
		t.Errorf("restored claim %+v, want 4", c)
	}
}

// LastClaimID is the highest claim ID the Events carry, whatever their
// order, skipping those without a claim or with one it cannot read.
func TestLastClaimID(t *testing.T) {
	ev := func(claim string) v1.Event {
		var e v1.Event
		if claim != "" {
			e.Annotations = map[string]string{AnnotationClaim: claim}
		}
		return e
	}
	evs := []v1.Event{ev(`{"id":7,"op":"ADD"}`), ev(""), ev(`{"id":12,"op":"REMOVE"}`), ev(`not json`), ev(`{"id":3,"op":"UPDATE"}`)}
	if got := LastClaimID(evs); got != 12 {
		t.Errorf("LastClaimID = %d, want 12", got)
	}
	if got := LastClaimID(nil); got != 0 {
		t.Errorf("LastClaimID(nil) = %d, want 0", got)
	}
}
