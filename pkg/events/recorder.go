package events

import (
	"context"
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Sink receives each Event as it changes. update is false for the first
// write of an Event and true when an existing Event's count moved.
type Sink interface {
	Write(ctx context.Context, ev *v1.Event, update bool) error
}

// Recorder correlates occurrences into Events and writes them to its sinks.
// It is not safe for concurrent use: one loop owns it.
type Recorder struct {
	host  string
	clock clock.PassiveClock
	sinks []Sink
	seen  map[string]*v1.Event
}

// NewRecorder returns a Recorder for events from host.
func NewRecorder(host string, clk clock.PassiveClock, sinks ...Sink) *Recorder {
	return &Recorder{host: host, clock: clk, sinks: sinks, seen: map[string]*v1.Event{}}
}

// key is the Event minus its timestamps and count.
func key(host string, o Occurrence) string {
	r := o.Object
	return strings.Join([]string{Component, host, r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion, o.Type, o.Reason, o.Message}, "\x00")
}

// Record records one occurrence and writes the resulting Event to every sink.
func (r *Recorder) Record(ctx context.Context, o Occurrence) error {
	now := r.clock.Now()
	k := key(r.host, o)
	ev, update := r.seen[k]
	if update {
		ev = ev.DeepCopy()
		ev.Count++
		ev.LastTimestamp.Time = now
	} else {
		ev = newEvent(o, r.host, now)
	}
	r.seen[k] = ev
	var errs []error
	for _, s := range r.sinks {
		if err := s.Write(ctx, ev, update); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
