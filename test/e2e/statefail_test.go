package e2e

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/agent"
)

// Saving that keeps failing in a state dir that was fine at the start is
// loud: the gauge drops at the first failure, a Node Warning naming the
// folder and the error follows once the save has failed for a few attempts,
// and a Normal Event says when it is saved again. The fault is real: the
// published state's state.json is replaced by a folder that holds a file,
// so every rename onto it fails, for root too.
func TestStateSaveKeepsFailingIsSaid(t *testing.T) {
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	a := startStateAgent(t, dir, state)
	evs := func() []v1.Event { return a.out.events(t) }
	a.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	a.waitEvent("StaticPodAdded", "web.yaml")
	waitShards(t, state, map[string]string{"kube-system/web-" + testNode: "nginx:1.28"})
	waitUntil(t, faultsWait, func() bool { return a.persisted() == 1 }, func() string { return "state_persisted not 1 at the start" })

	blocker := filepath.Join(state, "state.json")
	waitUntil(t, faultsWait, func() bool { _, err := os.Stat(blocker); return err == nil },
		func() string { return "state.json never written" })
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(blocker, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	a.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
	waitUntil(t, faultsWait, func() bool { return a.persisted() == 0 }, func() string { return "state_persisted not 0 while saving fails" })
	waitUntil(t, faultsWait, func() bool { return len(eventsWith(evs(), "StateNotPersisted", "cannot save")) > 0 },
		func() string { return "no StateNotPersisted Warning while saving keeps failing:\n" + a.dump() })
	w := eventsWith(evs(), "StateNotPersisted", "cannot save")[0]
	if w.Type != v1.EventTypeWarning || w.InvolvedObject.Kind != "Node" || !strings.Contains(w.Message, state) || !strings.Contains(w.Message, "state.json") {
		t.Fatalf("Warning %s about %s: %q; want a Node Warning naming %s and state.json", w.Type, w.InvolvedObject.Kind, w.Message, state)
	}
	if code, body := a.readyz(); code != http.StatusOK || !strings.Contains(body, "state not persisted") {
		t.Fatalf("/readyz while saving fails = %d %q, want 200 with the reason", code, body)
	}
	t.Logf("Warning: %s", w.Message)

	// Out of the way: the retry alone saves it, and says so once.
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 45*time.Second, func() bool { return len(eventsWith(evs(), "StatePersisted", "again")) > 0 },
		func() string { return "no StatePersisted Event after saving works again:\n" + a.dump() })
	if n := eventsWith(evs(), "StatePersisted", "again")[0]; n.Type != v1.EventTypeNormal || !strings.Contains(n.Message, state) {
		t.Fatalf("recovery Event %s %q", n.Type, n.Message)
	}
	waitUntil(t, faultsWait, func() bool { return a.persisted() == 1 }, func() string { return "state_persisted not back to 1" })
	waitShards(t, state, map[string]string{"kube-system/web-" + testNode: "nginx:1.29"})
	if n := len(eventsWith(evs(), "StateNotPersisted", "")); n != 1 {
		t.Errorf("%d StateNotPersisted lines for one failing spell, want 1:\n%s", n, a.dump())
	}
}

// stateAgent is an agent with a state dir of the test's, and the readers of
// its metrics server.
type stateAgent struct {
	*runningAgent
	t      *testing.T
	client *http.Client
	base   string
}

// startStateAgent starts the agent on path with state as its state dir.
func startStateAgent(t *testing.T, path, state string) stateAgent {
	t.Helper()
	addrs := make(chan net.Addr, 1)
	a := startAgent(t, path, func(o *agent.Options) {
		o.StateDir = state
		o.OnMetricsListen = func(a net.Addr) { addrs <- a }
	})
	s := stateAgent{runningAgent: a, t: t, client: &http.Client{Timeout: 5 * time.Second}, base: "http://" + (<-addrs).String()}
	t.Cleanup(s.client.CloseIdleConnections)
	return s
}

// persisted reads the podwatch_state_persisted gauge.
func (s stateAgent) persisted() float64 {
	return testutil.MetricValue(testutil.ScrapeMetrics(s.t, s.client, s.base), "podwatch_state_persisted")
}

// readyz is /readyz's status and body.
func (s stateAgent) readyz() (int, string) { return testutil.HTTPGet(s.t, s.client, s.base+"/readyz") }
