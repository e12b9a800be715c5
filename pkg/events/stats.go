package events

import (
	"errors"
	"maps"
	"time"
)

// Stats is a snapshot of a Recorder's counters, for metrics and tests. All
// counters only grow.
type Stats struct {
	// Recorded counts occurrences passed to Record.
	Recorded uint64
	// Replayed counts the occurrences among Recorded that were a change
	// already counted before a restart, and so not counted again.
	Replayed uint64
	// Combined counts occurrences that went to a "(combined from similar
	// events)" Event.
	Combined uint64
	// Evicted and Expired count Events the cache forgot for its size cap
	// and for idling past the TTL. Their pending writes are still delivered.
	Evicted, Expired uint64
	// Events is how many Events the cache holds now.
	Events int
	// Sinks has one entry per registered sink: stream sinks, then delivered
	// ones, each in registration order.
	Sinks []SinkStats
}

// SinkStats counts one sink's traffic. For a delivered sink every recorded
// occurrence ends up in exactly one of Written, Coalesced, Dropped or
// Pending, so Recorded == Written + Coalesced + Dropped.Total() + Pending:
// a write carries its first occurrence, coalesced ones ride along.
type SinkStats struct {
	Name string
	Mode Mode
	// Written counts successful writes; Failed counts failed attempts
	// (retried, or dropped when permanent).
	Written, Failed uint64
	// FailedByCode splits Failed by the code the sink gave its error (see
	// ErrorCode); nil until a write fails.
	FailedByCode map[string]uint64
	// Coalesced counts occurrences folded into a write that was already
	// pending, including failed writes folded into a newer pending one.
	Coalesced uint64
	Dropped   Drops
	// Pending is how many writes are queued or in flight now.
	Pending int
}

// Drops counts writes given up, by reason.
type Drops struct {
	// PendingFull: the sink's pending bound was reached and this was the
	// oldest queued write.
	PendingFull uint64
	// Permanent: the sink returned an ErrPermanent error.
	Permanent uint64
	// Shutdown: Flush's context ended before the write was delivered.
	Shutdown uint64
}

// Total sums the drops of every reason.
func (d Drops) Total() uint64 { return d.PendingFull + d.Permanent + d.Shutdown }

// Stats returns the current counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	st.Events = r.events.len()
	st.Sinks = make([]SinkStats, 0, len(r.stream)+len(r.delivered))
	for _, s := range r.stream {
		ss := s.stats
		ss.FailedByCode = maps.Clone(ss.FailedByCode)
		st.Sinks = append(st.Sinks, ss)
	}
	for _, s := range r.delivered {
		ss := s.stats
		ss.FailedByCode = maps.Clone(ss.FailedByCode)
		ss.Pending = s.q.len() + s.inflight
		st.Sinks = append(st.Sinks, ss)
	}
	return st
}

// CodeUnknown is the code of a sink error that carries none.
const CodeUnknown = "unknown"

// ErrorCode returns the code a sink put on err (an HTTP status such as
// "403", or a word such as "timeout"), found through errors.As on
// interface{ Code() string }; CodeUnknown when there is none.
func ErrorCode(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) && c.Code() != "" {
		return c.Code()
	}
	return CodeUnknown
}

// failed counts one failed attempt of a sink, by code.
func (st *SinkStats) failed(err error) {
	st.Failed++
	if st.FailedByCode == nil {
		st.FailedByCode = map[string]uint64{}
	}
	st.FailedByCode[ErrorCode(err)]++
}

// dropLog turns a storm of drops into one warning per reason per minute, so
// a drop is never silent and the log never floods.
type dropLog struct {
	lastLog  time.Time
	unlogged uint64
}

const dropLogEvery = time.Minute

// note counts one drop and reports whether to log now, with how many
// drops the line covers.
func (d *dropLog) note(now time.Time) (log bool, n uint64) {
	d.unlogged++
	if !d.lastLog.IsZero() && now.Sub(d.lastLog) < dropLogEvery {
		return false, 0
	}
	n, d.unlogged, d.lastLog = d.unlogged, 0, now
	return true, n
}

// logDrop counts and, rate-limited, logs a dropped write. Called with r.mu
// held; slog handlers must not call back into the Recorder.
func (r *Recorder) logDrop(s *deliveredSink, sl *slot, why string, counter *uint64, now time.Time, err error) {
	*counter++
	d := s.dropLogs[why]
	if d == nil {
		d = &dropLog{}
		s.dropLogs[why] = d
	}
	if ok, n := d.note(now); ok {
		attrs := []any{"sink", s.name, "reason", why, "dropped", n, "event", sl.e.name,
			"eventReason", sl.e.reason, "count", sl.e.count, "acked", sl.acked}
		if err != nil {
			attrs = append(attrs, "err", err)
		}
		r.log.Warn("event write dropped", attrs...)
	}
}

// logUnloggedDrops reports drops the rate limit held back; Run and Flush
// call it on their way out.
func (r *Recorder) logUnloggedDrops(s *deliveredSink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for why, d := range s.dropLogs {
		if d.unlogged > 0 {
			r.log.Warn("event writes dropped", "sink", s.name, "reason", why, "dropped", d.unlogged)
			d.unlogged = 0
		}
	}
}
