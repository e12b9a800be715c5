package store

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults for Options.
const (
	// DefaultMaxEvents bounds the live set, and with it the memory the
	// store holds and the log Open replays at start (BenchmarkOpen), while
	// being far more distinct Events than one node's static pods produce in
	// a day.
	DefaultMaxEvents = 2000
	// DefaultTTL keeps a day of local history. The apiserver forgets Events
	// after an hour (--event-ttl), but an operator asking "what happened to
	// this node overnight" is exactly who reads the local store, and a day
	// of Events is bounded by MaxEvents anyway.
	DefaultTTL = 24 * time.Hour
	// DefaultMaxLogBytes is the size past which the log is compacted. It
	// holds several live sets of DefaultMaxEvents Events, so each
	// compaction reclaims most of the file and they are rare.
	DefaultMaxLogBytes = 8 << 20
	// MinLogBytes is the smallest MaxLogBytes accepted: below it, a modest
	// live set alone would trigger a compaction on every write.
	MinLogBytes = 64 << 10
)

// Options tune a Store. The zero value means every default.
type Options struct {
	// MaxEvents caps the number of Events kept, in memory and in the log;
	// past it the Events with the oldest lastTimestamp are dropped, a tenth
	// of MaxEvents at a time, and the log is compacted. Default
	// DefaultMaxEvents.
	MaxEvents int
	// TTL drops Events whose lastTimestamp is older, from Events() at once
	// and from the file at the next compaction (or Open). Default
	// DefaultTTL.
	TTL time.Duration
	// MaxLogBytes is a soft bound on the log file. The log is compacted
	// when it reaches MaxLogBytes, or earlier once dead records outweigh
	// the live ones four to one; a live set larger than half of
	// MaxLogBytes lets the file grow to twice the live set. Default
	// DefaultMaxLogBytes, at least MinLogBytes.
	MaxLogBytes int64
	// Pod is the Kubernetes pod this process runs in, if any. It is
	// written into the lock with the host name, the pid and the start
	// time, for a second podwatch to name the holder by.
	Pod string
}

// Validate reports options that cannot work. Zero values are valid: they
// take the defaults.
func (o Options) Validate() error {
	var errs []string
	if o.MaxEvents < 0 {
		errs = append(errs, fmt.Sprintf("max events %d is negative", o.MaxEvents))
	}
	if o.TTL < 0 {
		errs = append(errs, fmt.Sprintf("event TTL %v is negative", o.TTL))
	}
	if o.MaxLogBytes < 0 || (o.MaxLogBytes > 0 && o.MaxLogBytes < MinLogBytes) {
		errs = append(errs, fmt.Sprintf("max log size %d bytes is below the minimum of %d", o.MaxLogBytes, MinLogBytes))
	}
	if len(errs) > 0 {
		// One line: main logs it.
		return errors.New("store: invalid options: " + strings.Join(errs, "; "))
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxEvents == 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxLogBytes == 0 {
		o.MaxLogBytes = DefaultMaxLogBytes
	}
	return o
}
