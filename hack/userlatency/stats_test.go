package main

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	// 1..200 ms in reverse order: percentile must sort a copy.
	xs := make([]time.Duration, 200)
	for i := range xs {
		xs[i] = time.Duration(200-i) * time.Millisecond
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 100 * time.Millisecond},
		{99, 198 * time.Millisecond},
		{100, 200 * time.Millisecond},
		{0.1, 1 * time.Millisecond},
	} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("p%v of 1..200 ms = %v, want %v", c.p, got, c.want)
		}
	}
	if xs[0] != 200*time.Millisecond {
		t.Errorf("percentile reordered its input: xs[0] = %v", xs[0])
	}
	// Rank 3.5 rounds up: the median of seven is the fourth.
	if got := percentile([]time.Duration{7, 1, 6, 2, 5, 3, 4}, 50); got != 4 {
		t.Errorf("p50 of 1..7 = %v, want 4", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one sample = %v, want 7", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}

func TestMs(t *testing.T) {
	if got := ms(1234567 * time.Nanosecond); got != 1.23 {
		t.Errorf("ms(1.234567ms) = %v, want 1.23", got)
	}
}
