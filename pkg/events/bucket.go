package events

import (
	"math"
	"time"
)

// bucket is a token bucket on the injected clock. client-go's flowcontrol
// would pull client-go into the agent for a dozen lines. Guarded by the
// Recorder's mutex.
type bucket struct {
	qps    float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(qps float64, burst int, now time.Time) bucket {
	return bucket{qps: qps, burst: float64(burst), tokens: float64(burst), last: now}
}

func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.qps)
	}
	b.last = now
}

// wait returns how long until a token is available at now (0: take it).
func (b *bucket) wait(now time.Time) time.Duration {
	b.refill(now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - b.tokens) / b.qps * float64(time.Second)))
}

// take spends a token; the balance may go negative, which delays the next.
func (b *bucket) take(now time.Time) {
	b.refill(now)
	b.tokens--
}
