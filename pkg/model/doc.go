// Package model is a port of the kubelet's file source and of its pod
// config merge, for the one source podwatch watches, as of kubelet v1.37.2
// (k8s.io/kubernetes pkg/kubelet/config: file.go, file_linux.go and
// config.go). Each function names the one it mirrors, so that a reader can
// hold it against the kubelet's source line by line.
//
// It does no I/O. What the kubelet would read is handed in: a watch event
// as the kernel gave it, a folder's listing, and for each file the pod it
// decodes to or why it does not (pkg/manifest decodes as the kubelet does).
// Where the kubelet logs and goes on, the port goes on and returns the
// error beside what it did. What it sends is data: the whole store after
// every change of it (an UndeltaStore), and what the merge makes of that
// (the kubelet's ADD, UPDATE, DELETE and REMOVE of pods by UID).
//
// The port keeps only the state the kubelet keeps: the store, the file to
// key mapping, and the merge's pods of the source with whether the source
// was seen.
package model
