package metrics

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/podwatch/podwatch/internal/testutil"
)

// The text is Prometheus's format to the byte: help and label values
// escaped, families sorted by name and series by labels, a histogram's
// buckets cumulative with +Inf, then its sum and count.
func TestTextFormat(t *testing.T) {
	r := newRegistry()
	c := newCounterVec("b_total", "Help with a \\ and\na new line.", "path", "kind")
	c.WithLabelValues(`C:\x "y"`+"\n", "z").Add(2)
	c.WithLabelValues("a", "z").Inc()
	h := newHistogram("a_seconds", "A histogram.", []float64{0.5, 1})
	for _, v := range []float64{0.1, 0.5, 0.7, 3} {
		h.Observe(v)
	}
	g := newGauge("c_info", "Const labels.", "version", "v1")
	g.Set(1)
	if err := r.register(c, h, g); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.write(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP a_seconds A histogram.
# TYPE a_seconds histogram
a_seconds_bucket{le="0.5"} 2
a_seconds_bucket{le="1"} 3
a_seconds_bucket{le="+Inf"} 4
a_seconds_sum 4.3
a_seconds_count 4
# HELP b_total Help with a \\ and\na new line.
# TYPE b_total counter
b_total{path="C:\\x \"y\"\n",kind="z"} 2
b_total{path="a",kind="z"} 1
# HELP c_info Const labels.
# TYPE c_info gauge
c_info{version="v1"} 1
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// Prometheus's own parser reads it back.
	mfs := testutil.ParseMetrics(t, b.String())
	if got := testutil.MetricValue(mfs, "b_total", "path", `C:\x "y"`+"\n"); got != 2 {
		t.Fatalf("parsed b_total = %v, want 2", got)
	}
	if err := r.register(newGauge("c_info", "again")); err == nil {
		t.Fatal("a second family of one name was registered")
	}
}

// Counters added to from many goroutines lose nothing.
func TestConcurrentAdds(t *testing.T) {
	c := newCounterVec("x_total", "x", "l")
	h := newHistogram("h", "h", []float64{1})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				c.WithLabelValues("a").Add(0.5)
				h.Observe(2)
			}
		})
	}
	wg.Wait()
	if got := c.WithLabelValues("a").load(); got != 4000 {
		t.Fatalf("counter = %v, want 4000", got)
	}
	if h.count != 8000 || h.counts[1] != 8000 {
		t.Fatalf("histogram count %d, +Inf bucket %d; want 8000", h.count, h.counts[1])
	}
}

// /metrics is gzipped for a scraper that asks, and plain text with the
// format's version otherwise; past maxScrapes in flight it answers 503.
func TestMetricsHandler(t *testing.T) {
	m := New("dev", nil)
	s, err := NewServer(Options{BindAddress: "127.0.0.1:0"}, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := s.metricsHandler()
	get := func(enc string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		rec := newRecorder()
		h.ServeHTTP(rec, req)
		return rec.result()
	}
	resp := get("")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != metricsContentType ||
		!strings.Contains(string(body), "podwatch_build_info{goversion=") {
		t.Fatalf("plain scrape: %d %q\n%.300s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp = get("deflate, gzip;q=0.9")
	zr, err := gzip.NewReader(resp.Body)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip scrape: %v, Content-Encoding %q", err, resp.Header.Get("Content-Encoding"))
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !strings.Contains(string(unzipped), "process_resident_memory_bytes ") {
		t.Fatalf("gunzipped scrape: %v\n%.300s", err, unzipped)
	}

	// maxScrapes writers block on a full pipe: one more is turned away.
	blocked, writing := make(chan struct{}), make(chan struct{}, maxScrapes)
	var wg sync.WaitGroup
	for range maxScrapes {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
			h.ServeHTTP(&blockingWriter{header: http.Header{}, writing: writing, release: blocked}, req)
		})
	}
	defer wg.Wait()
	defer close(blocked)
	for range maxScrapes {
		<-writing
	}
	rec := newRecorder()
	req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
	h.ServeHTTP(rec, req)
	if rec.code != http.StatusServiceUnavailable {
		t.Fatalf("scrape %d in flight: %d, want 503", maxScrapes+1, rec.code)
	}
}

// recorder is a minimal http.ResponseWriter for the handler tests.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, code: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

func (r *recorder) result() *http.Response {
	return &http.Response{StatusCode: r.code, Header: r.header, Body: io.NopCloser(&r.body)}
}

// blockingWriter says on writing that it writes, once, and blocks its
// writes until release is closed.
type blockingWriter struct {
	header  http.Header
	writing chan<- struct{}
	said    bool
	release chan struct{}
}

func (w *blockingWriter) Header() http.Header { return w.header }
func (w *blockingWriter) WriteHeader(int)     {}
func (w *blockingWriter) Write(b []byte) (int, error) {
	if !w.said {
		w.said = true
		w.writing <- struct{}{}
	}
	<-w.release
	return len(b), nil
}
