// Package backoff keeps an exponential backoff per ID, the way the kubelet
// restarts its manifest watch: the delay doubles from Initial up to Max, and an
// ID whose last failure is older than 2 × Max starts again from Initial, so a
// watch that failed long ago does not wait the maximum on its next failure.
//
// The delays come from client-go's flowcontrol.Backoff, as the kubelet's do.
// Around it this package keeps what that type does not give its callers:
// how much of a wait is left (Remaining), a Get that sees the forgetting,
// a count of IDs, and jitter drawn from an injected source.
//
// Time comes from an injected clock so the sequence can be tested without
// sleeping. A Backoff is safe for concurrent use.
package backoff
