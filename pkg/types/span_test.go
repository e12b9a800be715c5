package types

import (
	"testing"
	"time"
)

// A span reads at a glance however long it is: no nanoseconds, no
// "2160h0m0s".
func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "0s",
		1500 * time.Microsecond:               "2ms",
		20*time.Second + 400*time.Millisecond: "20s",
		90 * time.Minute:                      "1h30m",
		48*time.Hour - time.Nanosecond:        "2d",
		2 * time.Hour:                         "2h",
		90 * 24 * time.Hour:                   "90d",
	} {
		if got := Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}
