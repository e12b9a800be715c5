// Package events turns what podwatch found into Kubernetes Events and
// delivers them to sinks. Each distinct happening is one Event: a repeat
// raises its count and moves its lastTimestamp instead of creating a new
// Event, so kubectl shows what happened without floods and without lost
// counts.
package events
