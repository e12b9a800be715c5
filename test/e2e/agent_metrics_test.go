package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/agent"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// waitMetric polls /metrics until it has line (a sample with its value).
func waitMetric(t *testing.T, base, line string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, body := get(t, base+"/metrics")
		if strings.Contains(body, line+"\n") {
			return
		}
		if time.Now().After(deadline) {
			var ours []string
			for _, l := range strings.Split(body, "\n") {
				if strings.HasPrefix(l, "podwatch_") {
					ours = append(ours, l)
				}
			}
			t.Fatalf("/metrics never had %q; podwatch lines:\n%s", line, strings.Join(ours, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitMetricAtLeast polls /metrics until the series of name with labels
// has a value of at least min.
func waitMetricAtLeast(t *testing.T, base, name string, min float64, labels ...string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := testutil.MetricValue(testutil.ScrapeMetrics(t, client, base), name, labels...)
		if got >= min {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %v, want at least %v", name, labels, got, min)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAgentMetricsFollowTheScenario(t *testing.T) {
	dir := t.TempDir()
	addrs := make(chan net.Addr, 1)
	a := startAgent(t, dir, func(o *agent.Options) { o.OnMetricsListen = func(a net.Addr) { addrs <- a } })
	var base string
	select {
	case addr := <-addrs:
		base = "http://" + addr.String()
	case <-time.After(5 * time.Second):
		t.Fatal("metrics server never listened")
	}
	a.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "web.yaml")
	if code, body := get(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for code, body := get(t, base+"/readyz"); code != http.StatusOK; code, body = get(t, base+"/readyz") {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q after the first list", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitMetric(t, base, `podwatch_static_pod_changes_total{op="ADD"} 1`)
	waitMetric(t, base, `podwatch_manifests{state="valid"} 1`)
	waitMetric(t, base, `podwatch_watch_up 1`)

	writeByRename(t, dir, "web.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: []}\n")
	a.waitEvent("StaticPodRemoved", "web.yaml is invalid")
	waitMetric(t, base, `podwatch_static_pod_changes_total{op="REMOVE"} 1`)
	waitMetric(t, base, `podwatch_manifests{state="invalid"} 1`)
	// Every relist reports the invalid file again, so by the time a slow
	// scrape lands the count may be past 1: it must have started.
	waitMetricAtLeast(t, base, "podwatch_events_recorded_total", 1, "reason", "InvalidManifest", "type", "Warning")

	if err := os.Remove(filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, base, `podwatch_manifests{state="invalid"} 0`)
}
