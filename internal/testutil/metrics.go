package testutil

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// HTTPGet fetches url and returns the status and body; any failure to do
// so fails the test.
func HTTPGet(t testing.TB, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// ScrapeMetrics parses base+"/metrics".
func ScrapeMetrics(t testing.TB, c *http.Client, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := HTTPGet(t, c, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d %s", code, body)
	}
	return ParseMetrics(t, body)
}

// ParseMetrics parses the text exposition format.
func ParseMetrics(t testing.TB, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return mfs
}

// MetricValue is the value (the sample count, for a histogram) of the first
// series of name whose labels include the given name, value pairs; -1 when
// there is none.
func MetricValue(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
next:
	for _, m := range mfs[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			if !hasLabel(m, labels[i], labels[i+1]) {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

func hasLabel(m *dto.Metric, name, val string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue() == val
		}
	}
	return false
}

// GatherMetrics parses what m writes as /metrics, without a server.
func GatherMetrics(t testing.TB, m interface{ WriteText(io.Writer) error }) map[string]*dto.MetricFamily {
	t.Helper()
	var b bytes.Buffer
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return ParseMetrics(t, b.String())
}
