package diff

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// onlyChange runs one step and returns its one pod change.
func onlyChange(t *testing.T, st *State, s types.Snapshot, now time.Time) types.Change {
	t.Helper()
	changes, _ := Advance(st, s, now, testOpts)
	if len(changes) != 1 || changes[0].Op == "" || changes[0].ID == "" {
		t.Fatalf("changes %+v, want one pod change with an ID", changes)
	}
	return changes[0]
}

// roundTrip is st as a restart reads it back: through JSON.
func roundTrip(t *testing.T, st State) State {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChangeIDSameForAReplayDifferentForARepeat(t *testing.T) {
	a, b := pod("web", "nginx:a"), pod("web", "nginx:b")
	st := publishedState(t, snap(true, valid("web.yaml", a, t0)))
	saved := roundTrip(t, st.Share()) // the state on disk before the edits

	// a -> b -> a -> b, for real: consecutive IDs always differ.
	var ids []string
	for i, p := range []*types.Pod{b, a, b} {
		now := t0.Add(time.Duration(i+1) * time.Minute)
		ids = append(ids, onlyChange(t, &st, snap(false, valid("web.yaml", p, now)), now).ID)
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("consecutive changes share an ID: %v", ids)
	}
	if ids[0] != ids[2] {
		t.Fatalf("a->b twice: IDs %s and %s, want the same change named the same", ids[0], ids[2])
	}

	// A restart from the state saved before a -> b recomputes it with the
	// same ID.
	replay := onlyChange(t, &saved, snap(true, valid("web.yaml", b, t0)), t0.Add(time.Hour))
	if replay.ID != ids[0] {
		t.Fatalf("recomputed after a restart: ID %s, want %s", replay.ID, ids[0])
	}

	// Another file, a restyle, a REMOVE and another pod are other changes.
	others := map[string]types.Snapshot{
		"another file": snap(true, valid("web.yaml.bak", b, t0)),
		"restyled":     snap(true, valid("web.yaml", restyled(b), t0)),
	}
	for name, s := range others {
		from := roundTrip(t, st.Share())
		now := t0.Add(2 * time.Hour)
		var got types.Change
		changes, _ := Advance(&from, s, now, testOpts)
		changes2, _ := Advance(&from, s, now.Add(time.Minute), testOpts) // a change of file settles
		for _, ch := range append(changes, changes2...) {
			if ch.Op != "" {
				got = ch
			}
		}
		if got.ID == "" || got.ID == ids[2] {
			t.Errorf("%s: ID %q, want one of its own", name, got.ID)
		}
	}
	rm := roundTrip(t, st.Share())
	Advance(&rm, snap(true), t0.Add(3*time.Hour), testOpts)
	removed := onlyChange(t, &rm, snap(true), t0.Add(4*time.Hour))
	if removed.Op != types.OpRemove || removed.ID == ids[2] {
		t.Errorf("REMOVE: %+v", removed)
	}
	if other := changeID("kube-system/db-node-1", types.OpRemove, nil); other == removed.ID {
		t.Errorf("two pods' REMOVEs share ID %s", other)
	}
}

func BenchmarkChangeID(b *testing.B) {
	f := valid("kube-apiserver.yaml", pod("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.2"), t0)
	b.ReportAllocs()
	for range b.N {
		_ = changeID(f.Pod.Key, types.OpUpdate, &f)
	}
}
