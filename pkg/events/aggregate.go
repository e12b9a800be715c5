package events

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// group tracks the distinct Events (keys, or messages for occurrences
// without a key) of one aggregation group while it is
// active (see Options.AggregateInterval); the cache drops it when idle,
// which is what resets it.
//
// Like client-go, the max-th distinct message and any later new one go to
// the combined Event. Unlike client-go, which forgets a random known
// message each time, the first max-1 messages stay known, so their repeats
// keep counting on their own Events: which Event a repeat lands on does not
// depend on chance.
type group struct {
	// msgs are hashes of the keys (or messages) that have their own Event;
	// a 64-bit hash keeps a group small whatever their lengths.
	msgs []uint64
	// collapsed is set once a combined Event exists for the group.
	collapsed bool
	// n counts the group's occurrences since first, on whichever Event,
	// for the combined Event's message.
	n     int32
	first time.Time
}

// seen counts one occurrence of the group at now.
func (g *group) seen(now time.Time) {
	if g.n == 0 || now.Before(g.first) {
		g.first = now
	}
	g.n++
}

// combinedMessage is the message of a group's combined Event: how many
// occurrences the group had and over how long, then the latest message in
// full, so what changed last stays readable; capMessage bounds the whole.
func combinedMessage(g *group, reason, latest string, now time.Time) string {
	return capMessage(fmt.Sprintf("%s%d %s in %s; latest: %s", CombinedPrefix, g.n, plural(reason),
		duration.HumanDuration(now.Sub(g.first)), latest))
}

// plural names a group's occurrences for a combined Event's message.
func plural(reason string) string {
	switch reason {
	case "StaticPodUpdated":
		return "updates"
	}
	return "similar events"
}

// admit reports whether an occurrence with message hash h goes to the
// group's combined Event; limit is Options.AggregateMax (negative: never).
func (g *group) admit(h uint64, limit int) (combined bool) {
	if limit < 0 || slices.Contains(g.msgs, h) {
		return false
	}
	if !g.collapsed && len(g.msgs) < limit-1 {
		g.msgs = append(g.msgs, h)
		return false
	}
	g.collapsed = true
	return true
}
