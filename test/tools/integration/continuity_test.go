package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/pkg/store"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// The outage: the API server stopped for 30 s, occurrences going on
// meanwhile (one a second), then restarted on the same etcd: every count
// arrives, nothing is dropped.
func TestAPIServerDown30sLosesNoCount(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps the API server down for 30 s")
	}
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	o := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonWatchDegraded, "inotify watch lost")
	a.record(t, o, 2)
	eventually(t, "count 2", nodeCount(c, types.ReasonWatchDegraded, 2))
	// The API holds it a moment before the sink has settled the write.
	eventually(t, "the write settled", func(context.Context) (bool, error) { return a.apiStats().Pending == 0, nil })

	// However the two occurrences went out (one write, or a create and a
	// patch when the first was delivered before the second came), none
	// may succeed while the server is down.
	before := a.apiStats().Written
	s.StopAPIServer()
	down := time.Now()
	other := occ(events.NodeRef(node), v1.EventTypeNormal, types.ReasonPathMissing, "new during the outage")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	n := 0
	for time.Since(down) < 30*time.Second {
		a.record(t, o, 1)
		a.record(t, other, 1)
		n++
		<-tick.C
	}
	if st := a.apiStats(); st.Failed < 3 || st.Written != before {
		t.Errorf("during the outage: %+v; want failed writes and only the %d writes before it", st, before)
	}
	if err := s.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server down for %v, %d occurrences of each Event meanwhile", time.Since(down).Round(time.Second), n)
	eventually(t, "every count after the restart", nodeCount(c, types.ReasonWatchDegraded, int32(2+n)))
	eventually(t, "the Event created during the outage", nodeCount(c, types.ReasonPathMissing, int32(n)))
	if st := a.apiStats(); st.Dropped != (events.Drops{}) {
		t.Errorf("drops: %+v", st.Dropped)
	}
}

// countRequests wraps cfg's transport to count the requests made with it.
func countRequests(cfg *rest.Config) *countingTransport {
	ct := &countingTransport{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { ct.rt = rt; return ct })
	return ct
}

// startAgentWithStore is startAgent with the local store as a second
// delivered sink, as cmd/podwatch wires them.
func startAgentWithStore(t *testing.T, cfg *rest.Config, st *store.Store, restore []v1.Event) *agent {
	t.Helper()
	return startAgent(t, cfg, restore,
		events.DeliverTo("store", st).WithLimits(events.Limits{QPS: 1000, Burst: 1000, PendingMax: 1 << 16}))
}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(dir, store.Options{}, nil, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// storeCounts maps reason -> count of the local store's Events, failing on
// two Events for one reason.
func storeCounts(t *testing.T, evs []v1.Event) map[string]int32 {
	t.Helper()
	m := map[string]int32{}
	for _, e := range evs {
		if _, dup := m[e.Reason]; dup {
			t.Errorf("two stored Events for %s", e.Reason)
		}
		m[e.Reason] = e.Count
	}
	return m
}

// The agent restarts with its local store: the new Recorder is restored
// from the store's Events (plus kube.Restore, which finds nothing to list:
// the store covers every object), and counts continue on the same API
// Events: N occurrences, a restart, one more → count N+1, no second Event.
func TestAgentRestartContinuesFromLocalStore(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	dir := t.TempDir()
	createMirrorPod(t, c, podNS, podName, "hash1")
	pod := events.PodRef(podNS, podName)
	podOcc := occ(pod, v1.EventTypeWarning, types.ReasonIgnored, "unknown field spec.foo")
	podOcc.File = "kube-apiserver.yaml"
	nodeOcc := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonInvalid, "etcd.yaml: line 3: mapping values are not allowed")
	nodeOcc.File = "etcd.yaml"
	const nPod, nNode = 7, 5

	st1 := openStore(t, dir)
	a := startAgentWithStore(t, s.Config(apiserver.PodwatchToken), st1, nil)
	a.record(t, podOcc, nPod)
	a.record(t, nodeOcc, nNode)
	eventually(t, "first run: node Event delivered", nodeCount(c, types.ReasonInvalid, nNode))
	eventually(t, "first run: pod Event delivered", podCount(c, types.ReasonIgnored, nPod))
	a.stop()
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}

	// The restart, as cmd/podwatch does it: the store's Events, then
	// kube.Restore for what the store lacks.
	st2 := openStore(t, dir)
	local := st2.Events()
	if got := storeCounts(t, local); got[types.ReasonIgnored] != nPod || got[types.ReasonInvalid] != nNode || len(got) != 2 {
		t.Fatalf("store after the first run: %v", got)
	}
	cfg := s.Config(apiserver.PodwatchToken)
	ct := countRequests(cfg)
	client, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restored := kube.Restore(context.Background(), client, node, local, nil, pod)
	if len(restored) != 2 {
		t.Fatalf("restored %d Events, want the store's 2: %+v", len(restored), restored)
	}
	if n := ct.total.Load(); n != 0 {
		t.Errorf("Restore made %s; the store covers the node and the pod, want none", ct)
	}

	b := startAgentWithStore(t, s.Config(apiserver.PodwatchToken), st2, restored)
	b.record(t, podOcc, 1)
	b.record(t, nodeOcc, 1)
	// nodeCount and podCount fail on a second Event for the same reason.
	eventually(t, "node count continues at N+1 on the same Event", nodeCount(c, types.ReasonInvalid, nNode+1))
	eventually(t, "pod count continues at N+1 on the same Event", podCount(c, types.ReasonIgnored, nPod+1))
	b.stop()
	if st := b.apiStats(); st.Written != 2 || st.Dropped != (events.Drops{}) {
		t.Errorf("second run api sink: %+v; want 2 writes (patches), no drops", st)
	}
	after := st2.Events()
	if got := storeCounts(t, after); got[types.ReasonIgnored] != nPod+1 || got[types.ReasonInvalid] != nNode+1 || len(got) != 2 {
		t.Errorf("store after the restart: %v", got)
	}
	names := map[string]bool{}
	for _, e := range local {
		names[e.Name] = true
	}
	for _, e := range after {
		if !names[e.Name] {
			t.Errorf("stored Event %s (%s) is not one of the first run's: %v", e.Name, e.Reason, names)
		}
	}
}
