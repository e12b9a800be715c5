package types

// ClaimAt is where the kubelet makes a change: on its watch of the folder
// or at its periodic relist.
type ClaimAt string

// The places a change is made.
const (
	ClaimAtWatch  ClaimAt = "watch"
	ClaimAtRelist ClaimAt = "relist"
)

// Claim is what a pod change says of the kubelet, as data: the set of
// outcomes podwatch allows for what it cannot see. The Event's words are
// rendered from it, and whoever checks podwatch against the real kubelet
// reads it rather than the words. A restart is one UPDATE, or one REMOVE
// and ADD pair.
type Claim struct {
	// ID numbers the change among those podwatch has said, from 1, in
	// the order said; the published state carries the count across a
	// restart.
	ID uint64 `json:"id"`
	// Op is the kubelet's; empty on an amendment (see Amends).
	Op Op      `json:"op"`
	At ClaimAt `json:"at"`
	// Before bounds the restarts of the pod the kubelet may make on the
	// way to this change, the change itself not counted.
	Before Range `json:"before"`
	// MaySkip: the kubelet may not make this change at all.
	MaySkip bool `json:"maySkip"`
	// After bounds the drop-and-start pairs that may follow the change.
	After After `json:"after"`
	// With is the ID of a change this one is all-or-nothing with (the
	// REMOVE and ADD of a short invalid span), 0 when none. The later of
	// the two names the earlier, said before the later was known.
	With uint64 `json:"with,omitempty"`
	// Estimate: the time of the change is podwatch's estimate, not a
	// relist of the kubelet's it saw.
	Estimate bool `json:"estimate,omitempty"`
	// Capped: what podwatch cannot see had more outcomes than it explores;
	// Before is then {0, unbounded}.
	Capped bool `json:"capped,omitempty"`
	// Folded: a busy folder made podwatch fold its window by force,
	// keeping its own view of what the kubelet read and dropping other
	// ways that held this pod otherwise; Before is then {0, unbounded},
	// and MaySkip set where a dropped way does not make the change.
	Folded bool `json:"folded,omitempty"`
	// Amends lists the IDs of earlier changes this one widens (a sign that
	// the kubelet's file source ran behind, seen after they were said):
	// Before is then what holds on the way to each of them.
	Amends []uint64 `json:"amends,omitempty"`
	// Via names the files the kubelet may have taken in on the way (an
	// editor's temp file, a backup), for the words and -o wide.
	Via []string `json:"via,omitempty"`
}

// Range is a count between Min and Max; a nil Max is unbounded.
type Range struct {
	Min int  `json:"min"`
	Max *int `json:"max"`
}

// After bounds what may follow a change.
type After struct {
	Max int `json:"max"`
}

// Bounded returns the Range [lo, hi].
func Bounded(lo, hi int) Range { return Range{Min: lo, Max: &hi} }

// Exact reports whether r admits n and nothing else.
func (r Range) Exact(n int) bool { return r.Min == n && r.Max != nil && *r.Max == n }
