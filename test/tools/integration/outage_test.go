package integration

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// fleetNode is one agent of TestFleetCountsOnTimeAfterOutage: its own
// Recorder, kube client and sink, as cmd/podwatch builds them.
type fleetNode struct {
	name string
	rec  *events.Recorder
	log  *logBuf
	occ  events.Occurrence

	mu       sync.Mutex
	recorded int32
	last     time.Time // of the last occurrence
}

// startFleetNode wires one agent as cmd/podwatch does (pkg/agent setupKube
// and build): kube.Options from a kubeconfig with their defaults (client
// QPS 5, burst 10), a kube.Sink with its defaults, the Recorder with the
// default events.Options but keyInterval.
func startFleetNode(t *testing.T, kubeconfig, name string, keyInterval time.Duration) *fleetNode {
	t.Helper()
	cfg, err := kube.Options{Kubeconfig: kubeconfig}.Config(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lb := &logBuf{}
	log := slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sink, err := kube.NewSink(client, kube.SinkOptions{Node: name}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := events.New(events.Options{Host: name, KeyInterval: keyInterval}, clock.RealClock{}, log,
		[]events.Registration{events.DeliverTo("api", sink)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: Run: %v", name, err)
		}
	})
	o := occ(events.NodeRef(name), v1.EventTypeWarning, types.ReasonInvalid, "bad.yaml: line 3: mapping values are not allowed")
	o.File = "bad.yaml"
	return &fleetNode{name: name, rec: rec, log: lb, occ: o}
}

func (n *fleetNode) record(t *testing.T) {
	t.Helper()
	if err := n.rec.Record(context.Background(), n.occ); err != nil {
		t.Errorf("%s: Record: %v", n.name, err)
	}
	n.mu.Lock()
	n.recorded++
	n.last = time.Now()
	n.mu.Unlock()
}

func (n *fleetNode) apiStats() events.SinkStats {
	for _, s := range n.rec.Stats().Sinks {
		if s.Name == "api" {
			return s
		}
	}
	return events.SinkStats{}
}

// apiCounts maps node name -> count of its InvalidManifest Event in the
// API, failing on two Events for one node.
func apiCounts(ctx context.Context, c corev1client.CoreV1Interface) (map[string]int32, error) {
	l, err := c.Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	m := map[string]int32{}
	for _, e := range l.Items {
		if e.Reason != types.ReasonInvalid {
			continue
		}
		if _, dup := m[e.Source.Host]; dup {
			return nil, fmt.Errorf("two InvalidManifest Events for %s", e.Source.Host)
		}
		m[e.Source.Host] = e.Count
	}
	return m, nil
}

// The fleet: 20 agents against one API server, each recording a
// repeating InvalidManifest a few times per key interval; the API server
// goes away for 15 s and comes back; the occurrences go on a little, then
// stop. Every node's final count must reach the API within the key interval
// of its last occurrence, whatever retries happened before, plus a round
// trip's slack. Two outages: the server stopped and restarted, which then
// answers 403 until its RBAC authorizer has synced (the agents whose retry
// falls into that window, a few on most runs, are the ones a long park
// after a refusal, or a retry backoff longer than the key interval, would
// hold back); and the server hung (SIGSTOP), so writes in flight run into
// their timeout.
func TestFleetCountsOnTimeAfterOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps the API server away for 15 s, 20 agents")
	}
	t.Parallel()
	const outage = 15 * time.Second
	t.Run("restarted", func(t *testing.T) {
		t.Parallel()
		fleetOutage(t, func(s *apiserver.Server) (time.Time, error) {
			s.StopAPIServer()
			time.Sleep(outage)
			err := s.StartAPIServer()
			return time.Now(), err
		})
	})
	t.Run("hung", func(t *testing.T) {
		t.Parallel()
		fleetOutage(t, func(s *apiserver.Server) (time.Time, error) {
			if err := s.PauseAPIServer(); err != nil {
				return time.Time{}, err
			}
			time.Sleep(outage)
			err := s.ResumeAPIServer()
			return time.Now(), err
		})
	})
}

// fleetOutage runs TestFleetCountsOnTimeAfterOutage with the outage given:
// it takes the API server away, and back, returning when the server was
// back (ready, or resumed).
func fleetOutage(t *testing.T, outage func(*apiserver.Server) (time.Time, error)) {
	const (
		nodes       = 20
		keyInterval = 5 * time.Second
		every       = 1500 * time.Millisecond // a few occurrences per key interval
		// The sink's random wait before its first write after a failure,
		// and a round trip.
		slack = kube.DefaultJitter + time.Second
	)
	s, c := setup(t)
	kc, err := s.WriteKubeconfig(apiserver.PodwatchToken)
	if err != nil {
		t.Fatal(err)
	}
	fleet := make([]*fleetNode, nodes)
	for i := range fleet {
		fleet[i] = startFleetNode(t, kc, fmt.Sprintf("node-%02d", i), keyInterval)
	}
	// Each node on its own phase of the cadence, as relists of
	// independent kubelets would be.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i, n := range fleet {
		wg.Go(func() {
			phase := time.NewTimer(every * time.Duration(i) / nodes)
			select {
			case <-phase.C:
			case <-stop:
				phase.Stop()
				return
			}
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				n.record(t)
				select {
				case <-tick.C:
				case <-stop:
					return
				}
			}
		})
	}
	var stopOnce sync.Once
	stopRecording := func() {
		stopOnce.Do(func() {
			close(stop)
			wg.Wait()
		})
	}
	defer stopRecording()

	// Every Event created and patched once before the outage.
	eventually(t, "every node's Event patched", func(ctx context.Context) (bool, error) {
		got, err := apiCounts(ctx, c)
		if err != nil {
			return false, err
		}
		for _, n := range fleet {
			if got[n.name] < 2 {
				return false, nil
			}
		}
		return true, nil
	})
	down := time.Now()
	ready, err := outage(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("API server away for %v (until ready)", ready.Sub(down).Round(100*time.Millisecond))
	// One more occurrence per node, then none: the retries scheduled
	// during the outage decide when the final counts land.
	time.Sleep(every)
	stopRecording()

	// Poll the API until every node's count is exact, noting when each got
	// there; give up a while after the last occurrence's deadline, so a late
	// count is measured rather than waited for without end.
	var lastOcc time.Time
	want := map[string]int32{}
	lastOf := map[string]time.Time{}
	for _, n := range fleet {
		n.mu.Lock()
		want[n.name], lastOf[n.name] = n.recorded, n.last
		if n.last.After(lastOcc) {
			lastOcc = n.last
		}
		n.mu.Unlock()
	}
	giveUp := lastOcc.Add(keyInterval + slack + 20*time.Second)
	arrived := map[string]time.Time{}
	var got map[string]int32
	for len(arrived) < nodes && time.Now().Before(giveUp) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err = apiCounts(ctx, c)
		cancel()
		now := time.Now()
		if err != nil {
			t.Logf("list: %v", err)
		}
		for name, w := range want {
			if _, ok := arrived[name]; !ok && got[name] == w {
				arrived[name] = now
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	var late []time.Duration
	var firstLate *fleetNode
	refused := 0 // nodes the server answered 403 before its RBAC was ready
	failed := map[string]uint64{}
	for _, n := range fleet {
		if n.apiStats().FailedByCode["403"] > 0 {
			refused++
		}
		for code, k := range n.apiStats().FailedByCode {
			failed[code] += k
		}
		at, ok := arrived[n.name]
		if !ok {
			at = time.Now()
		}
		// From the last occurrence, or from the recovery for a node whose
		// last occurrence came before the API server was ready again.
		lateness := at.Sub(types.Later(lastOf[n.name], ready))
		late = append(late, lateness)
		if !ok || lateness > keyInterval+slack {
			st := n.apiStats()
			t.Errorf("%s: count %d in the API %v after its last occurrence or the recovery (arrived: %v), want %d within %v: stats %+v",
				n.name, got[n.name], lateness.Round(10*time.Millisecond), ok, want[n.name], keyInterval+slack, st)
			if firstLate == nil {
				firstLate = n
			}
		}
		if st := n.apiStats(); st.Dropped != (events.Drops{}) {
			t.Errorf("%s: drops %+v", n.name, st.Dropped)
		}
	}
	if len(failed) == 0 {
		t.Error("no write failed: the agents never saw the outage")
	}
	slices.Sort(late)
	for i := range late {
		late[i] = late[i].Round(10 * time.Millisecond)
	}
	t.Logf("%d nodes (%d refused with a 403 when back; failed writes by code %v), key interval %v: lateness of the final count after the last occurrence or the recovery: median %v, max %v; all: %v",
		nodes, refused, failed, keyInterval, late[len(late)/2], late[len(late)-1], late)
	if firstLate != nil {
		t.Logf("log of %s:\n%s", firstLate.name, firstLate.log.String())
	}
}
