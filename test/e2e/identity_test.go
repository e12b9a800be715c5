package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/store"
)

// Ten real `sed -i` flips between two images are two transitions, each
// made five times: Events are keyed by the transition, not by the message,
// which names sed's random temporary file. So there are at most two UPDATE
// Events, on stdout and in the store `podwatch events` reads, and their
// counts sum to the ten flips.
func TestSedFlipsKeepTwoEvents(t *testing.T) {
	sed, err := exec.LookPath("sed")
	if err != nil {
		t.Skip("no sed on PATH")
	}
	dir, stateDir := t.TempDir(), t.TempDir()
	const a, b = "nginx:1.28", "nginx:1.29"
	ag := startAgent(t, dir, func(o *agent.Options) { o.StateDir = stateDir })
	ag.waitFirstList()
	writeByRename(t, dir, "x.yaml", manifestYAML("web", a))
	ag.waitEvent("StaticPodAdded", "x.yaml")
	from, to := a, b
	for i := range 10 {
		if out, err := exec.Command(sed, "-i", "s/"+from+"/"+to+"/", filepath.Join(dir, "x.yaml")).CombinedOutput(); err != nil {
			t.Fatalf("sed -i: %v: %s", err, out)
		}
		ag.waitUpdates(i + 1)
		from, to = to, from
	}
	evs := ag.quiesce()
	ag.shutdown()
	stored, err := store.ReadEvents(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	for where, list := range map[string][]v1.Event{"stdout": evs, "store": stored} {
		n, sum := 0, int32(0)
		for _, ev := range list {
			if ev.Reason == "StaticPodUpdated" {
				n++
				sum += ev.Count
			}
		}
		if n > 2 || sum != 10 {
			t.Errorf("%s: ten sed -i flips gave %d UPDATE Events whose counts sum to %d, want at most 2 summing to 10:\n%s", where, n, sum, listEvents(list))
		}
	}
}

// An Event written by the release before, which keyed Events by message
// and wrote no podwatch.io/key, is continued by this one rather than split:
// the file's InvalidManifest goes on under the same name though its error,
// and so its message, changed across the upgrade.
func TestUpgradeContinuesAnUnkeyedEvent(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	writeByRename(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n")
	keep := func(o *agent.Options) { o.StateDir = stateDir }
	first := startAgent(t, dir, keep)
	old := first.waitEvent("InvalidManifest", "bad.yaml")
	first.shutdown()

	// Make the store what the release before left: no key annotation.
	st, err := store.Open(stateDir, store.Options{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stripped := 0
	for _, ev := range st.Events() {
		if _, ok := ev.Annotations[events.AnnotationKey]; !ok {
			continue
		}
		delete(ev.Annotations, events.AnnotationKey)
		if err := st.Write(context.Background(), &ev, true); err != nil {
			t.Fatal(err)
		}
		stripped++
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if stripped == 0 {
		t.Fatal("the store held no keyed Event to strip")
	}

	writeByRename(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c}]}\n")
	second := startAgent(t, dir, keep)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var got *v1.Event
		for _, ev := range second.out.events(t) {
			if ev.Reason == "InvalidManifest" && ev.Message != old.Message {
				got = &ev
			}
		}
		if got != nil {
			if got.Name != old.Name || got.Count <= old.Count || got.Annotations[events.AnnotationKey] == "" {
				t.Fatalf("after the upgrade: %s x%d %v; want %s continued past x%d and keyed\n%s", got.Name, got.Count, got.Annotations, old.Name, old.Count, second.dump())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no InvalidManifest with the new error within 5s:\n%s", second.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitUpdates polls stdout until n StaticPodUpdated occurrences (lines)
// are out, or fails at the deadline.
func (a *runningAgent) waitUpdates(n int) {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.count("StaticPodUpdated") < n {
		if time.Now().After(deadline) {
			a.t.Fatalf("%d StaticPodUpdated lines within 10s, want %d; got:\n%s", a.count("StaticPodUpdated"), n, a.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
