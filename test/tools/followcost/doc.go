// Package followcost measures what following costs a node when nothing
// changes: podwatch's idle polls of the container runtime against crictl
// ps run once per --follow-idle-poll-interval, both reading the same fake
// runtime (cri-client's, served on a unix socket) holding 50 static pods of
// two containers each, labelled as the kubelet labels them.
//
// Both sides run as built binaries, so the figures are of a real process:
// podwatch's CPU is read from the kernel's per-thread run time while it
// polls, crictl's from the rusage of each run. The figures and how to run
// them are in docs/measurements.md. The benchmarks only run under
// -bench.
package followcost
