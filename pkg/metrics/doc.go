// Package metrics exposes podwatch's own health: Prometheus metrics on
// /metrics, liveness on /healthz and readiness on /readyz.
//
// The run loop feeds a Metrics with what it already has in hand (each
// Snapshot of the file source, each batch of diff Changes); the event
// recorder's counters are read at scrape time through its Stats, so they are
// exact and cost nothing between scrapes. Every metric lives in the
// Metrics' own registry: nothing is registered globally, so two agents (or
// two tests) in one process never collide.
//
// The metric types and the text format are this package's own (expo.go),
// with the Go runtime's go_* and the process' process_* metrics under the
// names Prometheus's client library gives them: that library would link a
// protobuf runtime whose initialisation at start every node pays for in
// resident memory.
//
// Server binds --metrics-bind-address (default 127.0.0.1:10288, "0"
// disables) and serves until its context ends.
package metrics
