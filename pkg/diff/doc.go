// Package diff compares the last published static pods with what the
// manifest folder holds now, and says what the kubelet will do about it:
// ADD, UPDATE or REMOVE of a static pod, and the problems it will act on
// (invalid manifests, two files defining one pod, unreadable files).
//
// It is pure: no I/O, no goroutines, time passed in as now. The caller keeps
// the returned State and passes it back with the next snapshot, and persists
// it so a restart does not announce unchanged pods again.
package diff
