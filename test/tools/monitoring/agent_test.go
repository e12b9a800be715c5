package monitoring

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/podwatch/podwatch/pkg/agent"
)

// The agent's goroutines end with its Run; none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds every wait on the agent; it takes milliseconds.
const waitLimit = 10 * time.Second

const (
	deployDir     = "../../../deploy"
	prometheusDir = deployDir + "/prometheus"
	testNode      = "node-1"
)

// agentFolder is a manifest folder for startAgent, file name to content.
type agentFolder map[string]string

func pod(name, image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: kube-system}\n" +
		"spec:\n  containers:\n  - {name: " + name + ", image: \"" + image + "\"}\n"
}

// scrapedAgent is a running agent's metrics endpoint.
type scrapedAgent struct {
	t      *testing.T
	base   string
	client *http.Client
}

// startAgent runs the real agent in process on a folder holding files,
// serving its metrics on a free loopback port, until the test ends. With
// stateDir empty it gets a fresh one; more change its options.
func startAgent(t *testing.T, files agentFolder, stateDir string, more ...func(*agent.Options)) *scrapedAgent {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	opts := agent.DefaultOptions()
	opts.Source.Path = dir
	opts.Source.FileCheckFrequency = 500 * time.Millisecond
	opts.Source.SettleDelay = 50 * time.Millisecond
	opts.NodeName = testNode
	opts.Output = "json"
	opts.StateDir = stateDir
	opts.Metrics.BindAddress = "127.0.0.1:0"
	addrs := make(chan net.Addr, 1)
	opts.OnMetricsListen = func(a net.Addr) { addrs <- a }
	for _, f := range more {
		f(&opts)
	}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.New(opts, agent.Env{Stdout: io.Discard, Version: "monitoring-test"}).Run(ctx) }()
	a := &scrapedAgent{t: t, client: &http.Client{Timeout: waitLimit}}
	t.Cleanup(func() {
		a.client.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("agent Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("agent did not stop within %v", waitLimit)
		}
	})
	select {
	case addr := <-addrs:
		if addr == nil {
			t.Fatal("the agent serves no metrics")
		}
		a.base = "http://" + addr.String()
	case err := <-done:
		t.Fatalf("agent stopped before serving metrics: %v", err)
	case <-time.After(waitLimit):
		t.Fatal("the agent's metrics server never listened")
	}
	return a
}

// scrape reads /metrics over HTTP and parses it.
func (a *scrapedAgent) scrape() map[string]*dto.MetricFamily {
	a.t.Helper()
	resp, err := a.client.Get(a.base + "/metrics")
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		a.t.Fatalf("/metrics = %d, %v\n%s", resp.StatusCode, err, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		a.t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return mfs
}

// scrapeWhen polls /metrics until every want holds (a family name, then
// label name and value pairs, then the value), and returns that scrape.
func (a *scrapedAgent) scrapeWhen(want ...sampleWant) map[string]*dto.MetricFamily {
	a.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		mfs := a.scrape()
		var missing []string
		for _, w := range want {
			if !w.holds(mfs) {
				missing = append(missing, w.String())
			}
		}
		if len(missing) == 0 {
			return mfs
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("/metrics never had %s", strings.Join(missing, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sampleWant is a series of the scrape and the value it must have.
type sampleWant struct {
	name   string
	labels map[string]string
	value  float64
}

func (w sampleWant) String() string {
	return w.name + model.LabelSet(toLabelSet(w.labels)).String() + " " + model.SampleValue(w.value).String()
}

func (w sampleWant) holds(mfs map[string]*dto.MetricFamily) bool {
next:
	for _, m := range mfs[w.name].GetMetric() {
		for k, v := range w.labels {
			if labelValue(m, k) != v {
				continue next
			}
		}
		return sampleValue(m) == w.value
	}
	return false
}

func toLabelSet(m map[string]string) model.LabelSet {
	ls := make(model.LabelSet, len(m))
	for k, v := range m {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return -1
}
