package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	dto "github.com/prometheus/client_model/go"
)

// waitLimit bounds every wait; things take milliseconds.
const waitLimit = 10 * time.Second

// target is a real server for a Metrics, on a free loopback port.
type target struct {
	t      *testing.T
	base   string
	client *http.Client
}

// serve runs a server for m until the test ends.
func serve(t *testing.T, m *Metrics) *target {
	t.Helper()
	srv, err := NewServer(Options{BindAddress: "127.0.0.1:0"}, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	tg := &target{t: t, base: "http://" + addr.String(), client: &http.Client{Timeout: waitLimit}}
	t.Cleanup(func() {
		// Idle keep-alive connections would otherwise outlive the test.
		tg.client.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("Run did not return within %v of cancel", waitLimit)
		}
	})
	return tg
}

func (tg *target) get(path string) (int, string) {
	tg.t.Helper()
	resp, err := tg.client.Get(tg.base + path)
	if err != nil {
		tg.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tg.t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// scrape parses /metrics.
func (tg *target) scrape() map[string]*dto.MetricFamily {
	tg.t.Helper()
	code, body := tg.get("/metrics")
	if code != http.StatusOK {
		tg.t.Fatalf("/metrics = %d: %s", code, body)
	}
	return testutil.ParseMetrics(tg.t, body)
}

// value is testutil.MetricValue, named for this package's many uses.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	return testutil.MetricValue(mfs, name, labels...)
}

func errWatch() error { return errors.New("inotify_add_watch: no space left on device") }
