package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podwatch/podwatch/pkg/events"
)

// Drop reasons of podwatch_event_sink_dropped_total, one per events.Drops
// field.
const (
	DropPendingFull = "pending_full"
	DropPermanent   = "permanent"
	DropShutdown    = "shutdown"
)

// CodeUnknown labels failures whose sink gave no code (events.ErrorCode).
const CodeUnknown = events.CodeUnknown

// eventsCollector reads the recorder's Stats at scrape time: the counters
// are the recorder's own, so they are exact and never double-counted, and
// nothing runs between scrapes.
type eventsCollector struct {
	src EventStats

	combined, replayed, evicted, expired, cached *prometheus.Desc
	written, failed, coalesced                   *prometheus.Desc
	dropped, pending                             *prometheus.Desc
}

func newEventsCollector(src EventStats) *eventsCollector {
	sink := []string{"sink"}
	return &eventsCollector{
		src: src,
		combined: prometheus.NewDesc("podwatch_events_combined_total",
			"Occurrences folded into a \"(combined from similar events)\" Event.", nil, nil),
		replayed: prometheus.NewDesc("podwatch_events_replayed_total",
			"Changes seen again after a restart that had been counted before it (a crash before the state was saved): printed, not counted again.", nil, nil),
		evicted: prometheus.NewDesc("podwatch_events_evicted_total",
			"Events the correlation cache forgot for its size cap (their pending writes are still delivered).", nil, nil),
		expired: prometheus.NewDesc("podwatch_events_expired_total",
			"Events the correlation cache forgot after idling past its TTL.", nil, nil),
		cached: prometheus.NewDesc("podwatch_events_cached",
			"Events the correlation cache holds.", nil, nil),
		written: prometheus.NewDesc("podwatch_event_sink_writes_total",
			"Event writes a sink accepted.", sink, nil),
		failed: prometheus.NewDesc("podwatch_event_sink_write_errors_total",
			"Failed event write attempts, retried or dropped, by sink and code (an HTTP status such as 403, timeout, unreachable, or unknown).",
			[]string{"sink", "code"}, nil),
		coalesced: prometheus.NewDesc("podwatch_event_sink_coalesced_total",
			"Occurrences folded into an event write already pending for a sink.", sink, nil),
		dropped: prometheus.NewDesc("podwatch_event_sink_dropped_total",
			"Event writes given up, by sink and reason (pending_full, permanent, shutdown).",
			[]string{"sink", "reason"}, nil),
		pending: prometheus.NewDesc("podwatch_pending_writes",
			"Event writes queued or in flight for a sink.", sink, nil),
	}
}

func (c *eventsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.combined, c.replayed, c.evicted, c.expired, c.cached,
		c.written, c.failed, c.coalesced, c.dropped, c.pending} {
		ch <- d
	}
}

func (c *eventsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(c.combined, st.Combined)
	counter(c.replayed, st.Replayed)
	counter(c.evicted, st.Evicted)
	counter(c.expired, st.Expired)
	ch <- prometheus.MustNewConstMetric(c.cached, prometheus.GaugeValue, float64(st.Events))
	for _, s := range st.Sinks {
		counter(c.written, s.Written, s.Name)
		if len(s.FailedByCode) == 0 {
			// The series exists from the start, so rate() works on the first failure.
			counter(c.failed, 0, s.Name, CodeUnknown)
		}
		for code, n := range s.FailedByCode {
			counter(c.failed, n, s.Name, code)
		}
		counter(c.coalesced, s.Coalesced, s.Name)
		counter(c.dropped, s.Dropped.PendingFull, s.Name, DropPendingFull)
		counter(c.dropped, s.Dropped.Permanent, s.Name, DropPermanent)
		counter(c.dropped, s.Dropped.Shutdown, s.Name, DropShutdown)
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(s.Pending), s.Name)
	}
}

// Compile-time check that the recorder fits.
var _ EventStats = (*events.Recorder)(nil)
