package metrics

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
)

// readmeMetrics are the metrics the metrics page's table (docs/metrics.md,
// which the README links) names (without the podwatch_ prefix), each with its labels.
func readmeMetrics(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	start := strings.Index(s, "# Metrics, health and alerts")
	end := strings.Index(s, "## Alerting and scraping")
	if start < 0 || end < start {
		t.Fatal(`docs/metrics.md has no metrics table before "Alerting and scraping"`)
	}
	name := regexp.MustCompile("`([a-z_]+)(?:\\{([a-z_,]+)\\})?`")
	out := map[string][]string{}
	for _, line := range strings.Split(s[start:end], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			var labels []string
			if m[2] != "" {
				labels = strings.Split(m[2], ",")
			}
			out["podwatch_"+m[1]] = labels
		}
	}
	return out
}

// The docs' metrics table names every podwatch_ metric an agent exports, with
// its labels, and none that it does not.
func TestDocsNameTheMetrics(t *testing.T) {
	m := New("v", nil)
	if err := m.AddEventStats(&fakeStats{st: events.Stats{Sinks: []events.SinkStats{{Name: "stdout"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableFollow(); err != nil {
		t.Fatal(err)
	}
	m.ObserveChanges([]types.Change{{Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonAdded}})
	mfs := testutil.GatherMetrics(t, m)
	documented := readmeMetrics(t)
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "podwatch_") {
			continue
		}
		want, ok := documented[name]
		if !ok {
			t.Errorf("docs/metrics.md's table lacks %s", name)
			continue
		}
		delete(documented, name)
		var got []string
		if len(mf.GetMetric()) > 0 {
			for _, l := range mf.GetMetric()[0].GetLabel() {
				got = append(got, l.GetName())
			}
		}
		if name == "podwatch_build_info" {
			continue // its labels are constant, not a dimension
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("docs/metrics.md gives %s the labels %v; it has %v", name, want, got)
		}
	}
	for name := range documented {
		t.Errorf("docs/metrics.md's table names %s, which the agent does not export", name)
	}
}
