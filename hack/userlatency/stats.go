package main

import (
	"math"
	"slices"
	"time"
)

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of xs: the
// least sample with at least p% of the samples at or below it. Zero for no
// samples.
func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// ms prints d in milliseconds with two decimals.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}
