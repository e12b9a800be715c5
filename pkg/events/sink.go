package events

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Sink receives Events. update is false for the first write of an Event to
// this sink and true once the sink has acknowledged an earlier write of the
// same Event (same namespace and name) whose count has since moved.
//
// A delivered sink may see a create repeated (the first attempt timed out
// after the sink stored it) and an update of an Event it no longer has (a
// restart restored it, or the API's TTL removed it): Write must handle both,
// by updating or re-creating. Each call gets its own *v1.Event, which the
// sink may keep but must not change. Sinks never call back into the
// Recorder.
type Sink interface {
	Write(ctx context.Context, ev *v1.Event, update bool) error
}

// BatchSink is a Sink that can commit several Events in one call, so that
// one flush to disk covers many records: the first list of a large folder
// is thousands of ADDs at once. WriteBatch stores all of writes or none of
// them, and returns nil only when all are stored.
type BatchSink interface {
	Sink
	WriteBatch(ctx context.Context, writes []Write) error
}

// Write is one Event handed to a BatchSink; Update means what Sink.Write's
// update does.
type Write struct {
	Event  *v1.Event
	Update bool
}

// maxBatch bounds one WriteBatch: large enough that a list of 10,000
// manifests is a handful of disk flushes, small enough that one call stays
// well within Options.WriteTimeout.
const maxBatch = 512

// Mode says how a sink is fed.
type Mode int

const (
	// Stream sinks get every occurrence with its current count,
	// synchronously inside Record and in record order. A failed write is
	// counted and returned by Record, never retried: stdout is best effort
	// and must not slow down or buffer.
	Stream Mode = iota
	// Delivered sinks get coalesced writes from Run's goroutine: at most one
	// write per Event per Options.KeyInterval, a token bucket over all
	// Events, retries with backoff while the sink fails, and a final Flush.
	// The last write of an Event always carries its full count.
	Delivered
)

func (m Mode) String() string {
	switch m {
	case Stream:
		return "stream"
	case Delivered:
		return "delivered"
	}
	return "unknown"
}

// Registration names a sink and says how it is fed. The name labels stats
// and logs, so it must be unique within one Recorder.
type Registration struct {
	Name string
	Sink Sink
	Mode Mode
	// Limits override Options for this Delivered sink: a local file can
	// take a burst the API server must be spared.
	Limits Limits
}

// Limits bound one Delivered sink; zero fields take the Options values.
type Limits struct {
	QPS        float64 // sustained writes per second
	Burst      int     // writes allowed in a burst above QPS
	PendingMax int     // Events waiting to be written before the oldest is dropped
	// KeyInterval is the least time between two writes of one Event.
	KeyInterval time.Duration
}

// WithLimits returns r with its limits set.
func (r Registration) WithLimits(l Limits) Registration {
	r.Limits = l
	return r
}

// StreamTo registers s as a Stream sink.
func StreamTo(name string, s Sink) Registration {
	return Registration{Name: name, Sink: s, Mode: Stream}
}

// DeliverTo registers s as a Delivered sink.
func DeliverTo(name string, s Sink) Registration {
	return Registration{Name: name, Sink: s, Mode: Delivered}
}

// ErrPermanent marks a sink error that no retry can fix (the API rejected
// the Event as invalid, say). The write is dropped and counted instead of
// retried; a later occurrence of the same Event is still attempted.
// Sinks return it wrapped, e.g. fmt.Errorf("%w: ...", events.ErrPermanent),
// or via Permanent.
var ErrPermanent = errors.New("events: permanent sink error")

// Permanent wraps err so that errors.Is(err, ErrPermanent) holds while err
// stays reachable through errors.Is and errors.As. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type permanentError struct{ err error }

func (p permanentError) Error() string        { return "permanent: " + p.err.Error() }
func (p permanentError) Unwrap() error        { return p.err }
func (p permanentError) Is(target error) bool { return target == ErrPermanent }

// ErrRunning is returned by Run when another Run of the same Recorder is
// still going.
var ErrRunning = errors.New("events: Run already running")
