package types

import (
	"testing"
	"time"
)

func TestRelistPhaseNextAfter(t *testing.T) {
	last := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	known := RelistPhase{State: RelistKnown, Period: 20 * time.Second, Last: last, Next: last.Add(20 * time.Second)}
	for _, c := range []struct {
		p    RelistPhase
		t    time.Time
		want time.Time
	}{
		{known, last.Add(-time.Second), last},
		{known, last, last.Add(20 * time.Second)},
		{known, last.Add(19 * time.Second), last.Add(20 * time.Second)},
		{known, last.Add(20 * time.Second), last.Add(40 * time.Second)},
		{known, last.Add(65 * time.Second), last.Add(80 * time.Second)},
		{RelistPhase{State: RelistUnknown, Period: time.Second, Last: last}, last, time.Time{}},
		{RelistPhase{State: RelistLost, Period: time.Second, Last: last}, last, time.Time{}},
	} {
		if got := c.p.NextAfter(c.t); !got.Equal(c.want) {
			t.Errorf("%v phase, NextAfter(Last%+v) = %v, want %v", c.p.State, c.t.Sub(last), got, c.want)
		}
	}
}

func TestRelistStateString(t *testing.T) {
	for s, want := range map[RelistState]string{RelistUnknown: "unknown", RelistKnown: "known", RelistLost: "lost"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", s, s.String(), want)
		}
	}
}
