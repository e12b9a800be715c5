package events

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// tokenWait returns how long until l holds a whole token at now (0: take
// it now).
func tokenWait(l *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - l.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	// Rounded up: the limiter's own delays round down, and a sink sleeping one could wake short of the token.
	return time.Duration(math.Ceil(missing / float64(l.Limit()) * float64(time.Second)))
}
