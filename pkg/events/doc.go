// Package events turns what podwatch found into Kubernetes Events and
// delivers them to sinks. Each distinct happening is one Event: a repeat
// raises its count and moves its lastTimestamp instead of creating a new
// Event, a flood of similar ones collapses into one combined Event, so
// kubectl shows what happened without floods and without lost counts.
//
// A Recorder does the counting (Record) and the delivery (Run, Flush).
// Stream sinks (stdout) see every occurrence as it is recorded; delivered
// sinks (the local store, the API) get coalesced, rate-bounded, retried
// writes whose last one always carries the full count. A pod change
// replayed after a crash (its Event delivered, the published state not yet
// saved) is recognised by the change identity its Event carries and is not
// counted again. The design is in docs/design/event-compression.md.
package events
