package events

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestTokenWaitStartsFullAndEndsOnTheToken(t *testing.T) {
	l := rate.NewLimiter(3, 2)
	for i := range 2 {
		if d := tokenWait(l, t0); d != 0 {
			t.Fatalf("token %d of a full bucket waits %v, want 0", i+1, d)
		}
		l.AllowN(t0, 1)
	}
	// A third of a second is no whole number of nanoseconds: the wait must
	// end on the first instant that holds the token, not one before it.
	d := tokenWait(l, t0)
	if d != 333333334*time.Nanosecond {
		t.Fatalf("empty bucket at 3 QPS waits %v, want 333.333334ms", d)
	}
	if w := tokenWait(l, t0.Add(d-time.Nanosecond)); w == 0 {
		t.Fatalf("a nanosecond before the wait ends the token is already there")
	}
	if w := tokenWait(l, t0.Add(d)); w != 0 || !l.AllowN(t0.Add(d), 1) {
		t.Fatalf("when the wait ends: tokenWait %v, want 0 and a token", w)
	}
}

// BenchmarkTokenBucket checks and takes tokens as a delivered sink does,
// 37 ms apart at the default rate.
func BenchmarkTokenBucket(b *testing.B) {
	now := t0
	l := rate.NewLimiter(DefaultQPS, DefaultBurst)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(37 * time.Millisecond)
		if tokenWait(l, now) == 0 {
			l.AllowN(now, 1)
		}
	}
}
