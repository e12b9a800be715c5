package events

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"
)

// Defaults for Options. The cache and aggregation values are client-go's
// (tools/record), the TTL is the apiserver's --event-ttl, so an Event
// podwatch still counts is one the API still shows. The delivery bounds are
// podwatch's own: a node agent should cost the apiserver a few writes per
// happening, not one per occurrence.
const (
	DefaultCacheSize         = 4096
	DefaultTTL               = time.Hour
	DefaultAggregateMax      = 10
	DefaultAggregateInterval = 10 * time.Minute
	DefaultKeyInterval       = time.Minute
	DefaultQPS               = 5.0
	DefaultBurst             = 25
	DefaultPendingMax        = 4096
	DefaultRetryInitial      = time.Second
	DefaultRetryMax          = time.Minute
	DefaultRetryJitter       = 0.2
	DefaultWriteTimeout      = 10 * time.Second
	// DefaultTextRepeatInterval lets a problem that lasts all day put a
	// handful of lines an hour into the journal rather than one per relist.
	DefaultTextRepeatInterval = 10 * time.Minute
)

// Options tune a Recorder. Zero values take the defaults above.
type Options struct {
	// Host is the source host of every Event: the node name. Required; main
	// owns the flag for it. Restored Events from another host are ignored.
	Host string
	// CacheSize caps the Events (and, separately, the aggregation groups)
	// kept for correlation; the least recently seen is dropped first.
	CacheSize int
	// TTL drops an Event idle for longer; its next occurrence starts a new
	// Event. Keep it at or below the apiserver's --event-ttl, or counts would
	// continue on Events the API has already deleted.
	TTL time.Duration
	// AggregateMax is how many distinct keys (Occurrence.Key, else the
	// message) for one object, type and reason (and file, for file-scoped
	// reasons) make the next distinct ones collapse into one "(combined from similar events)" Event. Negative
	// turns aggregation off.
	AggregateMax int
	// AggregateInterval resets an aggregation group idle for longer.
	AggregateInterval time.Duration
	// KeyInterval is the least time between two writes of one Event to one
	// delivered sink; occurrences in between are coalesced into the next.
	KeyInterval time.Duration
	// QPS and Burst bound all writes to one delivered sink (token bucket).
	QPS   float64
	Burst int
	// PendingMax caps the Events waiting for a write, per delivered sink.
	// Past it the longest-waiting write is dropped (and counted).
	PendingMax int
	// RetryInitial and RetryMax bound the exponential backoff after a
	// retryable sink error, per Event and for the sink as a whole. A wait,
	// jitter included, never exceeds the sink's KeyInterval either, so a
	// failure holds no count back longer than the key interval does.
	RetryInitial time.Duration
	RetryMax     time.Duration
	// RetryJitter lengthens each retry wait by a random part of up to
	// this fraction of it, so that the agents of a fleet that failed
	// together (an API server outage) do not retry in step. Default 0.2;
	// negative: none.
	RetryJitter float64
	// WriteTimeout bounds one Write call to a delivered sink.
	WriteTimeout time.Duration
	// TextRepeatInterval is the least time between two text lines on
	// stdout for one problem's Event (types.IsProblem) whose message did not
	// change and with no change printed in between (a new Event, a new
	// message or a line after a change is printed at once). Every change is
	// printed; JSON output prints every occurrence. Negative: text prints
	// every occurrence of a problem too. Read it through
	// EffectiveTextRepeatInterval; the Recorder does not use it, the stream
	// sink does.
	TextRepeatInterval time.Duration
}

// AddFlags registers the --event-* flags on fs with the current values (or
// the defaults for zero values) as defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.setDefaults()
	fs.IntVar(&o.CacheSize, "event-cache-size", o.CacheSize,
		"Most Events kept for counting repeats; the least recently seen is forgotten first.")
	fs.DurationVar(&o.TTL, "event-ttl", o.TTL,
		"Forget an Event not seen for this long; keep at or below the apiserver's --event-ttl.")
	fs.IntVar(&o.AggregateMax, "event-aggregate-max", o.AggregateMax,
		"Distinct happenings (a pod's transitions, a file's faults) for one object and reason after which further ones are combined into one Event (negative: never).")
	fs.DurationVar(&o.AggregateInterval, "event-aggregate-interval", o.AggregateInterval,
		"Idle time after which similar events are counted afresh for combining.")
	fs.DurationVar(&o.KeyInterval, "event-key-interval", o.KeyInterval,
		"Least time between two writes of the same Event to a delivered sink; repeats in between are coalesced.")
	fs.Float64Var(&o.QPS, "event-qps", o.QPS,
		"Sustained writes per second to each delivered sink (the API, the local store).")
	fs.IntVar(&o.Burst, "event-burst", o.Burst,
		"Writes to each delivered sink allowed in a burst above --event-qps.")
	fs.IntVar(&o.PendingMax, "event-pending-max", o.PendingMax,
		"Most Events waiting to be written to one delivered sink; past it the oldest is dropped and counted.")
	fs.DurationVar(&o.RetryInitial, "event-retry-initial", o.RetryInitial,
		"First backoff after a delivered sink fails; it doubles on each further failure.")
	fs.DurationVar(&o.RetryMax, "event-retry-max", o.RetryMax,
		"Longest backoff between retries while a delivered sink fails; a retry, jitter included, never waits longer than the sink's key interval.")
	fs.Float64Var(&o.RetryJitter, "event-retry-jitter", o.RetryJitter,
		"Random extra part of each retry wait, as a fraction of it, so agents failing together do not retry in step (negative: none).")
	fs.DurationVar(&o.WriteTimeout, "event-write-timeout", o.WriteTimeout,
		"Timeout of one write to a delivered sink.")
	fs.DurationVar(&o.TextRepeatInterval, "event-text-repeat-interval", o.TextRepeatInterval,
		"With --output text, least time between two lines for the same problem (a leftover .bak, an invalid file: reported at every relist) while its message stays the same and no change is printed; every change is printed (negative: every occurrence). --output json prints every occurrence.")
}

// Validate reports options New would reject. Zero values are valid: they
// mean the defaults.
func (o Options) Validate() error {
	var errs []error
	if o.Host == "" {
		errs = append(errs, errors.New("events: host (node name) is required"))
	}
	nonNeg := func(flag string, v time.Duration) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("--%s must not be negative, got %v", flag, v))
		}
	}
	nonNeg("event-ttl", o.TTL)
	nonNeg("event-aggregate-interval", o.AggregateInterval)
	nonNeg("event-key-interval", o.KeyInterval)
	nonNeg("event-retry-initial", o.RetryInitial)
	nonNeg("event-retry-max", o.RetryMax)
	nonNeg("event-write-timeout", o.WriteTimeout)
	if o.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("--event-cache-size must not be negative, got %d", o.CacheSize))
	}
	if o.AggregateMax == 1 {
		errs = append(errs, errors.New("--event-aggregate-max 1 would combine every event; use 2 or more, or a negative value to turn combining off"))
	}
	if o.QPS < 0 || math.IsNaN(o.QPS) || math.IsInf(o.QPS, 0) {
		errs = append(errs, fmt.Errorf("--event-qps must be a finite, non-negative number, got %v", o.QPS))
	}
	if o.Burst < 0 {
		errs = append(errs, fmt.Errorf("--event-burst must not be negative, got %d", o.Burst))
	}
	if math.IsNaN(o.RetryJitter) || o.RetryJitter > 1 {
		errs = append(errs, fmt.Errorf("--event-retry-jitter must be at most 1, got %v", o.RetryJitter))
	}
	if o.PendingMax < 0 {
		errs = append(errs, fmt.Errorf("--event-pending-max must not be negative, got %d", o.PendingMax))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.AggregateMax == 0 {
		o.AggregateMax = DefaultAggregateMax
	}
	if o.AggregateInterval == 0 {
		o.AggregateInterval = DefaultAggregateInterval
	}
	if o.KeyInterval == 0 {
		o.KeyInterval = DefaultKeyInterval
	}
	if o.QPS == 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.PendingMax == 0 {
		o.PendingMax = DefaultPendingMax
	}
	if o.RetryInitial == 0 {
		o.RetryInitial = DefaultRetryInitial
	}
	if o.RetryMax == 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.RetryJitter == 0 {
		o.RetryJitter = DefaultRetryJitter
	}
	o.TextRepeatInterval = o.EffectiveTextRepeatInterval()
}

// EffectiveTextRepeatInterval is TextRepeatInterval with 0 taking the
// default: what the stream sink is to be built with.
func (o Options) EffectiveTextRepeatInterval() time.Duration {
	if o.TextRepeatInterval == 0 {
		return DefaultTextRepeatInterval
	}
	return o.TextRepeatInterval
}
