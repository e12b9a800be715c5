package metrics

import (
	"bufio"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The metrics and their text exposition (Prometheus's text format 0.0.4),
// written here rather than taken from Prometheus's client library: that
// library links a protobuf runtime and registers its descriptors at start,
// which every node pays for in memory, while podwatch needs counters,
// gauges and histograms, some with labels, and one page of text.

// Metric types, as the exposition names them.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
	typeSummary   = "summary"
)

// errAlreadyRegistered: a family of that name is in the registry already.
var errAlreadyRegistered = errors.New("metrics: already registered")

// family is a metric family: its name, help and type, and its samples at
// the time of a scrape.
type family interface {
	info() *meta
	// collect calls emit for each sample: the sample's name suffix
	// ("", "_bucket", "_sum", "_count"), its label pairs and its value.
	collect(emit func(suffix string, labels []string, v float64))
}

// meta describes a family; labels are its variable labels' names, const
// its constant label pairs (name, value, name, value...).
type meta struct {
	name, help, typ string
	labels          []string
	constLabels     []string
}

func (d *meta) info() *meta { return d }

// pairs is the label pairs of a series: const labels, then the variable
// labels with values.
func (d *meta) pairs(values []string) []string {
	out := make([]string, 0, len(d.constLabels)+2*len(values))
	out = append(out, d.constLabels...)
	for i, v := range values {
		out = append(out, d.labels[i], v)
	}
	return out
}

// registry holds families and writes them out.
type registry struct {
	mu   sync.Mutex
	fams map[string]family
}

func newRegistry() *registry { return &registry{fams: map[string]family{}} }

// register adds families; none is added if one's name is taken.
func (r *registry) register(fs ...family) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range fs {
		if _, ok := r.fams[f.info().name]; ok {
			return errAlreadyRegistered
		}
	}
	for _, f := range fs {
		r.fams[f.info().name] = f
	}
	return nil
}

// write writes every family, sorted by name, each family's series sorted
// by their labels, as Prometheus's text format.
func (r *registry) write(w io.Writer) error {
	r.mu.Lock()
	fams := make([]family, 0, len(r.fams))
	for _, f := range r.fams {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.info().name, b.info().name) })
	bw := bufio.NewWriter(w)
	type line struct {
		sortKey string
		text    []byte
	}
	var lines []line
	for _, f := range fams {
		d := f.info()
		lines = lines[:0]
		f.collect(func(suffix string, labels []string, v float64) {
			var b []byte
			b = append(b, d.name...)
			b = append(b, suffix...)
			b = appendLabels(b, labels)
			b = append(b, ' ')
			b = appendFloat(b, v)
			b = append(b, '\n')
			// Series sort by their labels; a histogram's lines stay in
			// the order collect gave them (buckets, sum, count).
			lines = append(lines, line{sortKey: string(appendLabels(nil, seriesLabels(labels))), text: b})
		})
		slices.SortStableFunc(lines, func(a, b line) int { return strings.Compare(a.sortKey, b.sortKey) })
		bw.WriteString("# HELP ")
		bw.WriteString(d.name)
		bw.WriteByte(' ')
		bw.WriteString(escapeHelp(d.help))
		bw.WriteString("\n# TYPE ")
		bw.WriteString(d.name)
		bw.WriteByte(' ')
		bw.WriteString(d.typ)
		bw.WriteByte('\n')
		for _, l := range lines {
			bw.Write(l.text)
		}
	}
	return bw.Flush()
}

// seriesLabels drops the le and quantile labels, which tell a series'
// lines apart rather than the series.
func seriesLabels(labels []string) []string {
	n := len(labels)
	if n >= 2 && (labels[n-2] == "le" || labels[n-2] == "quantile") {
		return labels[:n-2]
	}
	return labels
}

func appendLabels(b []byte, labels []string) []byte {
	if len(labels) == 0 {
		return b
	}
	b = append(b, '{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, labels[i]...)
		b = append(b, '=', '"')
		b = appendLabelValue(b, labels[i+1])
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendLabelValue escapes a label value as the format requires:
// backslash, double quote and line feed.
func appendLabelValue(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// escapeHelp escapes a help text: backslash and line feed.
func escapeHelp(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return strings.NewReplacer("\\", `\\`, "\n", `\n`).Replace(s)
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// atomicFloat is a float64 updated atomically.
type atomicFloat struct{ bits atomic.Uint64 }

func (v *atomicFloat) load() float64 { return math.Float64frombits(v.bits.Load()) }

func (v *atomicFloat) Set(f float64) { v.bits.Store(math.Float64bits(f)) }

func (v *atomicFloat) Add(f float64) {
	for {
		old := v.bits.Load()
		if v.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+f)) {
			return
		}
	}
}

func (v *atomicFloat) Inc() { v.Add(1) }

// counter is a value that only goes up (Inc, Add); gauge one that is set.
type (
	counter struct{ atomicFloat }
	gauge   struct{ atomicFloat }
)

// scalar is a family of one series without variable labels.
type scalar struct {
	meta
	v atomicFloat
}

func (s *scalar) collect(emit func(string, []string, float64)) {
	emit("", s.pairs(nil), s.v.load())
}

func (s *scalar) Inc()          { s.v.Inc() }
func (s *scalar) Add(f float64) { s.v.Add(f) }
func (s *scalar) Set(f float64) { s.v.Set(f) }

func newCounter(name, help string) *scalar {
	return &scalar{meta: meta{name: name, help: help, typ: typeCounter}}
}

func newGauge(name, help string, constLabels ...string) *scalar {
	return &scalar{meta: meta{name: name, help: help, typ: typeGauge, constLabels: constLabels}}
}

// vec is a family of series by their label values, made on first use.
type vec[T any] struct {
	meta
	mk     func() *T
	put    func(t *T, d *meta, values []string, emit func(string, []string, float64))
	mu     sync.Mutex
	series map[string]*vecEntry[T]
}

type vecEntry[T any] struct {
	values []string
	m      *T
}

// WithLabelValues is the series of those label values, one per label.
func (v *vec[T]) WithLabelValues(values ...string) *T {
	if len(values) != len(v.labels) {
		panic("metrics: " + v.name + ": " + strconv.Itoa(len(values)) + " label values for " + strconv.Itoa(len(v.labels)) + " labels")
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.series[key]; ok {
		return e.m
	}
	e := &vecEntry[T]{values: slices.Clone(values), m: v.mk()}
	v.series[key] = e
	return e.m
}

func (v *vec[T]) collect(emit func(string, []string, float64)) {
	v.mu.Lock()
	entries := make([]*vecEntry[T], 0, len(v.series))
	for _, e := range v.series {
		entries = append(entries, e)
	}
	v.mu.Unlock()
	for _, e := range entries {
		v.put(e.m, &v.meta, e.values, emit)
	}
}

func newCounterVec(name, help string, labels ...string) *vec[counter] {
	return &vec[counter]{
		meta:   meta{name: name, help: help, typ: typeCounter, labels: labels},
		mk:     func() *counter { return &counter{} },
		series: map[string]*vecEntry[counter]{},
		put: func(c *counter, d *meta, values []string, emit func(string, []string, float64)) {
			emit("", d.pairs(values), c.load())
		},
	}
}

func newGaugeVec(name, help string, labels ...string) *vec[gauge] {
	return &vec[gauge]{
		meta:   meta{name: name, help: help, typ: typeGauge, labels: labels},
		mk:     func() *gauge { return &gauge{} },
		series: map[string]*vecEntry[gauge]{},
		put: func(g *gauge, d *meta, values []string, emit func(string, []string, float64)) {
			emit("", d.pairs(values), g.load())
		},
	}
}

// histogram counts observations into buckets by upper bound.
type histogram struct {
	bounds []float64 // sorted, without +Inf
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf's
	sum    float64
	count  uint64
}

func newHistogramSeries(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// Observe counts v into the first bucket whose bound is at least v.
func (h *histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.count++
	h.mu.Unlock()
}

func (h *histogram) put(d *meta, values []string, emit func(string, []string, float64)) {
	h.mu.Lock()
	counts, sum, count := slices.Clone(h.counts), h.sum, h.count
	h.mu.Unlock()
	base := d.pairs(values)
	var cum uint64
	for i, c := range counts {
		cum += c
		le := "+Inf"
		if i < len(h.bounds) {
			le = string(appendFloat(nil, h.bounds[i]))
		}
		emit("_bucket", append(slices.Clip(base), "le", le), float64(cum))
	}
	emit("_sum", base, sum)
	emit("_count", base, float64(count))
}

// histogramScalar is a histogram family of one series.
type histogramScalar struct {
	meta
	*histogram
}

func (h *histogramScalar) collect(emit func(string, []string, float64)) {
	h.put(&h.meta, nil, emit)
}

func newHistogram(name, help string, bounds []float64) *histogramScalar {
	return &histogramScalar{meta: meta{name: name, help: help, typ: typeHistogram}, histogram: newHistogramSeries(bounds)}
}

func newHistogramVec(name, help string, bounds []float64, labels ...string) *vec[histogram] {
	return &vec[histogram]{
		meta:   meta{name: name, help: help, typ: typeHistogram, labels: labels},
		mk:     func() *histogram { return newHistogramSeries(bounds) },
		series: map[string]*vecEntry[histogram]{},
		put: func(h *histogram, d *meta, values []string, emit func(string, []string, float64)) {
			h.put(d, values, emit)
		},
	}
}

// collectorFunc is a family whose samples are read at each scrape.
type collectorFunc struct {
	meta
	f func(emit func(v float64, values ...string))
}

func (c *collectorFunc) collect(emit func(string, []string, float64)) {
	c.f(func(v float64, values ...string) { emit("", c.pairs(values), v) })
}

func newCollectorFunc(name, help, typ string, labels []string, f func(emit func(v float64, values ...string))) *collectorFunc {
	return &collectorFunc{meta: meta{name: name, help: help, typ: typ, labels: labels}, f: f}
}
