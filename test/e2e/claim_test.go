package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/published"
	"github.com/podwatch/podwatch/pkg/store"
	"github.com/podwatch/podwatch/pkg/types"
)

// claimOf is ev's podwatch.io/claim, ok false when it has none.
func claimOf(t *testing.T, ev v1.Event) (types.Claim, bool) {
	t.Helper()
	raw, ok := ev.Annotations[events.AnnotationClaim]
	if !ok {
		return types.Claim{}, false
	}
	var c types.Claim
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("%s: claim %q: %v", ev.Name, raw, err)
	}
	return c, true
}

// Every change on the agent's -o json stdout carries its claim, op for
// op, numbered in the order said; a problem carries none; and the local
// store, which podwatch events reads, keeps the latest claim of each
// Event.
func TestRunChangesCarryClaims(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	a := startAgent(t, dir, func(o *agent.Options) { o.StateDir = state })
	a.waitFirstList()
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", "registry.k8s.io/etcd:3.6.15-0"))
	a.waitEvent(types.ReasonAdded, "etcd.yaml")
	if err := os.WriteFile(filepath.Join(dir, "etcd.yaml"), []byte(manifestYAML("etcd", "registry.k8s.io/etcd:3.6.16-0")), 0o600); err != nil {
		t.Fatal(err)
	}
	a.waitEvent(types.ReasonUpdated, "3.6.16-0")
	writeByRename(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: bad\n")
	a.waitEvent(types.ReasonInvalid, "bad.yaml")
	if err := os.Remove(filepath.Join(dir, "etcd.yaml")); err != nil {
		t.Fatal(err)
	}
	a.waitEvent(types.ReasonRemoved, "etcd.yaml was removed")

	op := map[string]types.Op{types.ReasonAdded: types.OpAdd, types.ReasonUpdated: types.OpUpdate, types.ReasonRemoved: types.OpRemove}
	var last uint64
	for _, ev := range a.out.events(t) {
		c, ok := claimOf(t, ev)
		want, change := op[ev.Reason]
		switch {
		case !change && ok:
			t.Errorf("%s %q carries a claim", ev.Reason, ev.Message)
		case !change:
		case !ok:
			t.Errorf("%s %q carries no claim", ev.Reason, ev.Message)
		case c.Op != want || c.ID <= last:
			t.Errorf("%s claims %+v, want %s numbered after %d", ev.Reason, c, want, last)
		default:
			last = c.ID
		}
	}
	if last != 3 {
		t.Errorf("last claim %d, want 3 (added, updated, removed)", last)
	}
	a.shutdown()
	stored, err := store.ReadEvents(state)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ev := range stored {
		if c, ok := claimOf(t, ev); ok && c.Op == op[ev.Reason] {
			seen++
		}
	}
	if seen != 3 {
		t.Errorf("%d Events in the store carry their claim, want 3", seen)
	}
}

// lastClaim is the highest claim ID on a's stdout so far.
func lastClaim(t *testing.T, a *runningAgent) uint64 {
	t.Helper()
	var last uint64
	for _, ev := range a.out.events(t) {
		if c, ok := claimOf(t, ev); ok {
			last = max(last, c.ID)
		}
	}
	return last
}

// A restart whose state.json is lost (so its count of claims) numbers
// its claims on from those its Events carry, never from 1 again.
func TestClaimIDsGoOnAfterTheStateIsLost(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	withState := func(o *agent.Options) { o.StateDir = state }
	a := startAgent(t, dir, withState)
	a.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	a.waitEvent(types.ReasonAdded, "web.yaml")
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	a.waitEvent(types.ReasonUpdated, "image 1.28 → 1.29")
	before := lastClaim(t, a)
	a.shutdown()
	if err := os.Remove(filepath.Join(state, published.StateFile)); err != nil {
		t.Fatal(err)
	}

	b := startAgent(t, dir, withState)
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.30"))
	up := b.waitEvent(types.ReasonUpdated, "image 1.29 → 1.30")
	c, ok := claimOf(t, up)
	if !ok || before == 0 || c.ID <= before {
		t.Fatalf("after the restart the UPDATE claims %+v, want an ID past %d, the last before it", c, before)
	}
}
