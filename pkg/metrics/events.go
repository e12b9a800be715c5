package metrics

import (
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
}

// families are the collector's metric families; each reads the stats
// when scraped.
func (c *eventsCollector) families() []family {
	stats := func() *events.Stats {
		st := c.src.Stats()
		return &st
	}
	sink := []string{"sink"}
	return []family{
		newCollectorFunc("podwatch_events_combined_total",
			"Occurrences folded into a \"(combined from similar events)\" Event.", typeCounter, nil,
			func(emit func(float64, ...string)) { emit(float64(stats().Combined)) }),
		newCollectorFunc("podwatch_events_replayed_total",
			"Changes seen again after a restart that had been counted before it (a crash before the state was saved): printed, not counted again.", typeCounter, nil,
			func(emit func(float64, ...string)) { emit(float64(stats().Replayed)) }),
		newCollectorFunc("podwatch_events_evicted_total",
			"Events the correlation cache forgot for its size cap (their pending writes are still delivered).", typeCounter, nil,
			func(emit func(float64, ...string)) { emit(float64(stats().Evicted)) }),
		newCollectorFunc("podwatch_events_expired_total",
			"Events the correlation cache forgot after idling past its TTL.", typeCounter, nil,
			func(emit func(float64, ...string)) { emit(float64(stats().Expired)) }),
		newCollectorFunc("podwatch_events_cached",
			"Events the correlation cache holds.", typeGauge, nil,
			func(emit func(float64, ...string)) { emit(float64(stats().Events)) }),
		newCollectorFunc("podwatch_event_sink_writes_total",
			"Event writes a sink accepted.", typeCounter, sink,
			func(emit func(float64, ...string)) {
				for _, s := range stats().Sinks {
					emit(float64(s.Written), s.Name)
				}
			}),
		newCollectorFunc("podwatch_event_sink_write_errors_total",
			"Failed event write attempts, retried or dropped, by sink and code (an HTTP status such as 403, timeout, unreachable, or unknown).",
			typeCounter, []string{"sink", "code"},
			func(emit func(float64, ...string)) {
				for _, s := range stats().Sinks {
					if len(s.FailedByCode) == 0 {
						emit(0, s.Name, CodeUnknown)
					}
					for code, n := range s.FailedByCode {
						emit(float64(n), s.Name, code)
					}
				}
			}),
		newCollectorFunc("podwatch_event_sink_coalesced_total",
			"Occurrences folded into an event write already pending for a sink.", typeCounter, sink,
			func(emit func(float64, ...string)) {
				for _, s := range stats().Sinks {
					emit(float64(s.Coalesced), s.Name)
				}
			}),
		newCollectorFunc("podwatch_event_sink_dropped_total",
			"Event writes given up, by sink and reason (pending_full, permanent, shutdown).",
			typeCounter, []string{"sink", "reason"},
			func(emit func(float64, ...string)) {
				for _, s := range stats().Sinks {
					emit(float64(s.Dropped.PendingFull), s.Name, DropPendingFull)
					emit(float64(s.Dropped.Permanent), s.Name, DropPermanent)
					emit(float64(s.Dropped.Shutdown), s.Name, DropShutdown)
				}
			}),
		newCollectorFunc("podwatch_pending_writes",
			"Event writes queued or in flight for a sink.", typeGauge, sink,
			func(emit func(float64, ...string)) {
				for _, s := range stats().Sinks {
					emit(float64(s.Pending), s.Name)
				}
			}),
	}
}

var _ EventStats = (*events.Recorder)(nil)
