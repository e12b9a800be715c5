package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/types"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/source/file"
)

const metricsWait = 10 * time.Second

func metricsPod(name string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
		"\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n"
}

// The pieces run wires, run for real: the file source on a folder, the
// diff, the event recorder and the metrics server on a free port. Each
// snapshot is observed as the loop would, then /metrics and /readyz must
// show it.
func TestListenMetricsFollowsTheAgent(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.yaml", "b.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(metricsPod(strings.TrimSuffix(n, ".yaml"))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	clk := clock.RealClock{}
	src, err := file.New(file.Options{Path: dir, NodeName: "n1", FileCheckFrequency: time.Hour}, clk, log)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := events.NewStreamSink(io.Discard, events.OutputText, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := events.New(events.Options{Host: "n1"}, clk, log, []events.Registration{events.StreamTo("stdout", sink)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test", nil)
	if err := m.AddEventStats(rec); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	srv, addr, err := listenMetrics(metrics.Options{BindAddress: "127.0.0.1:0"}, m, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()
	stop := func() error {
		cancel()
		return <-served
	}
	client := &http.Client{Timeout: metricsWait}
	snaps := make(chan types.Snapshot)
	srcDone := make(chan error, 1)
	t.Cleanup(func() {
		client.CloseIdleConnections()
		if err := stop(); err != nil {
			t.Errorf("metrics server: %v", err)
		}
		cancel()
		if err := <-srcDone; err != nil {
			t.Errorf("file source: %v", err)
		}
	})
	base := "http://" + addr.String()
	go func() { srcDone <- src.Run(ctx, snaps) }()

	// The metrics see a snapshot only when step observes it.
	if code, body := testutil.HTTPGet(t, client, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, metrics.NotReadyFirstList) {
		t.Errorf("/readyz before the first list = %d %q", code, body)
	}

	var state diff.State
	// step is the loop's work for one snapshot, metrics included.
	step := func(s types.Snapshot) {
		m.ObserveSnapshot(s)
		changes, next, _ := diff.Compute(state, s, s.Time, diff.Options{NodeName: "n1", Path: dir})
		state = next
		m.ObserveChanges(changes)
		for _, ch := range changes {
			if err := rec.Record(ctx, occurrence(ch)); err != nil {
				t.Errorf("record: %v", err)
			}
		}
	}
	// until steps through snapshots until /metrics satisfies ok.
	until := func(what string, ok func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
		t.Helper()
		deadline := time.After(metricsWait)
		for {
			select {
			case s := <-snaps:
				step(s)
				if mfs := testutil.ScrapeMetrics(t, client, base); ok(mfs) {
					return mfs
				}
			case <-deadline:
				t.Fatalf("no snapshot brought %s within %v", what, metricsWait)
				return nil
			}
		}
	}

	mfs := until("two valid manifests", func(mfs map[string]*dto.MetricFamily) bool {
		return testutil.MetricValue(mfs, "podwatch_manifests", "state", "valid") == 2
	})
	if got := testutil.MetricValue(mfs, "podwatch_static_pod_changes_total", "op", "ADD"); got != 2 {
		t.Errorf("ADD changes = %v, want 2", got)
	}
	if got := testutil.MetricValue(mfs, "podwatch_event_sink_writes_total", "sink", "stdout"); got != 2 {
		t.Errorf("stdout writes = %v, want 2", got)
	}
	if got := testutil.MetricValue(mfs, "podwatch_files_listed"); got != 2 {
		t.Errorf("files listed = %v, want 2", got)
	}
	if got := testutil.MetricValue(mfs, "podwatch_list_duration_seconds"); got != 1 {
		t.Errorf("list duration samples = %v, want 1", got)
	}
	if code, body := testutil.HTTPGet(t, client, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the first list = %d %q", code, body)
	}

	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	until("an invalid manifest", func(mfs map[string]*dto.MetricFamily) bool {
		return testutil.MetricValue(mfs, "podwatch_manifests", "state", "invalid") == 1
	})
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	until("one valid manifest", func(mfs map[string]*dto.MetricFamily) bool {
		return testutil.MetricValue(mfs, "podwatch_manifests", "state", "valid") == 1
	})
}

func TestListenMetricsDisabledAndBusy(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv, addr, err := listenMetrics(metrics.Options{BindAddress: metrics.Disabled}, metrics.New("test", nil), log)
	if err != nil || addr != nil || srv != nil {
		t.Errorf("disabled: server %v addr %v err %v, want nothing bound", srv, addr, err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, _, err = listenMetrics(metrics.Options{BindAddress: busy.Addr().String()}, metrics.New("test", nil), log)
	if !errors.Is(err, metrics.ErrListen) {
		t.Errorf("busy port: err %v, want metrics.ErrListen", err)
	}
}
