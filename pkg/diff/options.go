package diff

import "time"

// Defaults for Options.
const (
	DefaultSettleDelay     = time.Second
	DefaultMaxFieldChanges = 20
)

// Options tune Compute.
type Options struct {
	// NodeName is the node events about the node name.
	NodeName string
	// Path is the watched --path, for messages.
	Path string
	// SettleDelay is how long bad news (REMOVE, InvalidManifest,
	// DuplicatePod, a change of winning file) must persist before it is
	// reported, so that editor saves raise no false alarm. Default 1s.
	SettleDelay time.Duration
	// MaxFieldChanges caps the fields named in an UPDATE message. Default 20.
	MaxFieldChanges int
	// RelistPeriod is said in messages about a degraded watch.
	RelistPeriod time.Duration

	// fullOnly makes Compute skip its fast path; tests compare the two.
	fullOnly bool
}

func (o Options) withDefaults() Options {
	if o.SettleDelay < 0 {
		o.SettleDelay = 0
	}
	if o.MaxFieldChanges <= 0 {
		o.MaxFieldChanges = DefaultMaxFieldChanges
	}
	return o
}

// comparable is o as two steps must share it for the second to build on
// the first: the test switch aside.
func (o Options) comparable() Options {
	o.fullOnly = false
	return o
}
