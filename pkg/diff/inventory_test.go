package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A start with no published state takes an inventory: each pod is found,
// not added, and no message claims the kubelet starts it, in both the full
// and the in-place step.
func TestInventoryFindsEachPod(t *testing.T) {
	s := snap(true, valid("a.yaml", pod("a", "img:1"), t0), valid("b.yaml", pod("b", "img:2"), t0))
	for _, step := range []struct {
		name string
		run  func(State) ([]types.Change, State)
	}{
		{"Compute", func(st State) ([]types.Change, State) {
			changes, next, _ := Compute(st, s, t0.Add(time.Minute), testOpts)
			return changes, next
		}},
		{"Advance", func(st State) ([]types.Change, State) {
			changes, _ := Advance(&st, s, t0.Add(time.Minute), testOpts)
			return changes, st
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			changes, next := step.run(State{Inventory: true})
			if len(changes) != 2 {
				t.Fatalf("got %d changes, want 2: %+v", len(changes), changes)
			}
			for _, ch := range changes {
				if ch.Reason != types.ReasonFound || ch.Op != types.OpAdd || ch.Found == nil || ch.Found.Case != types.FoundUnknown {
					t.Errorf("change %+v, want a StaticPodFound of an unknown case", ch)
				}
				if types.IsProblem(ch.Reason) {
					t.Errorf("%s is a problem", ch.Reason)
				}
				if strings.Contains(ch.Message, "starts it") || !strings.Contains(ch.Message, "cannot tell") {
					t.Errorf("message %q claims what podwatch cannot see", ch.Message)
				}
			}
			// A found pod's Event is keyed by what it is, so the follower's
			// words for it never split it.
			if changes[0].Key == "" || changes[0].Key == changes[1].Key {
				t.Errorf("keys %q, %q: want two distinct keys", changes[0].Key, changes[1].Key)
			}
			if changes[0].Object.Name != "a-node-1" || !strings.HasPrefix(changes[0].Message, "a.yaml (img:1): podwatch cannot tell whether the kubelet runs the pod") ||
				!strings.HasPrefix(changes[0].Detail, "a.yaml: static pod kube-system/a-node-1 found") {
				t.Errorf("first change %+v, want a.yaml's pod found", changes[0])
			}
			if next.Inventory || len(next.Pods) != 2 {
				t.Fatalf("after the inventory: Inventory %v, %d pods; want false, 2", next.Inventory, len(next.Pods))
			}
			// What comes after the inventory is a change again.
			s2 := snap(true, valid("a.yaml", pod("a", "img:1"), t0), valid("b.yaml", pod("b", "img:2"), t0), valid("c.yaml", pod("c", "img:3"), t0.Add(2*time.Minute)))
			later, _, _ := Compute(next, s2, t0.Add(3*time.Minute), testOpts)
			if len(later) != 1 || later[0].Reason != types.ReasonAdded {
				t.Fatalf("after the inventory got %+v, want one StaticPodAdded", later)
			}
		})
	}
}

// With published state a start announces only what differs: no pod is
// found again.
func TestInventoryNotWithPublishedState(t *testing.T) {
	a, b := valid("a.yaml", pod("a", "img:1"), t0), valid("b.yaml", pod("b", "img:2"), t0)
	st := publishedState(t, snap(true, a))
	changes, _, _ := Compute(st, snap(true, a, b), t0.Add(time.Hour), testOpts)
	if len(changes) != 1 || changes[0].Reason != types.ReasonAdded || changes[0].Object.Name != "b-node-1" {
		t.Fatalf("got %+v, want only b's StaticPodAdded", changes)
	}
	for _, ch := range changes {
		if ch.Reason == types.ReasonFound {
			t.Errorf("found %s with published state", ch.Object.Name)
		}
	}
}
