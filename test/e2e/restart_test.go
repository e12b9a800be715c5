package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/eventlist"
)

// lastEvent returns the most recent write of the Event with reason, or nil.
func (a *runningAgent) lastEvent(reason string) *v1.Event {
	var last *v1.Event
	for _, ev := range a.out.events(a.t) {
		if ev.Reason == reason {
			last = &ev
		}
	}
	return last
}

// waitCount polls until the Event with reason has reached at least n.
func (a *runningAgent) waitCount(reason string, n int32) v1.Event {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ev := a.lastEvent(reason); ev != nil && ev.Count >= n {
			return *ev
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%s did not reach count %d within 10s:\n%s", reason, n, a.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRestartContinuesCountsAndState(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	withState := func(o *agent.Options) { o.StateDir = state }

	first := startAgent(t, dir, withState)
	first.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", "etcd:3.6"))
	writeByRename(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n")
	first.waitEvent("StaticPodAdded", "web.yaml")
	first.waitEvent("StaticPodAdded", "etcd.yaml")
	first.waitCount("InvalidManifest", 2)
	first.shutdown()
	before := *first.lastEvent("InvalidManifest")

	// While podwatch is down: web changes, etcd goes.
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	if err := os.Remove(filepath.Join(dir, "etcd.yaml")); err != nil {
		t.Fatal(err)
	}

	second := startAgent(t, dir, withState)
	second.waitCount("InvalidManifest", before.Count+1)
	// The stream prints every occurrence: the first after the restart has
	// the next count.
	var after v1.Event
	for _, ev := range second.out.events(t) {
		if ev.Reason == "InvalidManifest" {
			after = ev
			break
		}
	}
	if after.Name != before.Name || !after.FirstTimestamp.Equal(&before.FirstTimestamp) {
		t.Fatalf("after restart the InvalidManifest Event is %s first seen %v; want %s first seen %v (same Event, count continued)",
			after.Name, after.FirstTimestamp, before.Name, before.FirstTimestamp)
	}
	if after.Count != before.Count+1 {
		t.Fatalf("count after restart = %d, want %d", after.Count, before.Count+1)
	}
	second.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
	second.waitEvent("StaticPodRemoved", "etcd.yaml was removed")
	if n := second.count("StaticPodAdded"); n != 0 {
		t.Fatalf("restart announced %d unchanged pods again:\n%s", n, second.dump())
	}
	second.shutdown()
	final := *second.lastEvent("InvalidManifest")

	// podwatch events reads what the agent stored.
	var out bytes.Buffer
	if _, err := eventlist.Print(&out, eventlist.DefaultOptions(state), time.Now()); err != nil {
		t.Fatalf("podwatch events: %v", err)
	}
	for _, want := range []string{"LAST SEEN", "InvalidManifest", "StaticPodUpdated", "pod/web-node-1", "node/" + testNode} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("podwatch events lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if _, err := eventlist.Print(&out, eventlist.Options{StateDir: state, Output: "json", Types: []string{"Warning"}}, time.Now()); err != nil {
		t.Fatalf("podwatch events -o json: %v", err)
	}
	var list v1.EventList
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range list.Items {
		if ev.Type != "Warning" {
			t.Fatalf("--types Warning printed a %s event", ev.Type)
		}
		if ev.Reason == "InvalidManifest" {
			found = ev.Count == final.Count && ev.Name == final.Name
		}
	}
	if !found {
		t.Fatalf("stored InvalidManifest does not carry the final count %d:\n%s", final.Count, out.String())
	}
}

func TestUnusableStateDirRunsInMemory(t *testing.T) {
	dir := t.TempDir()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan net.Addr, 1)
	a := startAgent(t, dir, func(o *agent.Options) {
		o.StateDir = filepath.Join(notADir, "state")
		o.OnMetricsListen = func(a net.Addr) { addrs <- a }
	})
	a.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "web.yaml")
	// Loud, once: a Node Warning, the gauge at 0, and /readyz says why
	// while staying 200.
	if ev := a.waitEvent("StateNotPersisted", "runs in memory"); ev.Type != "Warning" || ev.InvolvedObject.Kind != "Node" {
		t.Fatalf("in-memory Event = %s %s", ev.Type, ev.InvolvedObject.Kind)
	}
	base := "http://" + (<-addrs).String()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	if got := testutil.MetricValue(testutil.ScrapeMetrics(t, client, base), "podwatch_state_persisted"); got != 0 {
		t.Fatalf("podwatch_state_persisted = %v in memory, want 0", got)
	}
	if code, body := testutil.HTTPGet(t, client, base+"/readyz"); code != http.StatusOK || !strings.Contains(body, "state not persisted") {
		t.Fatalf("/readyz in memory = %d %q", code, body)
	}
}
