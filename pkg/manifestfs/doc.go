// Package manifestfs reads manifests and manifest folders from disk the way
// podwatch does everywhere: the agent's file source and podwatch check both
// read through it, so the lint and the agent cannot disagree about a file.
//
// A read never blocks on a FIFO, socket or device that replaced a manifest
// after it was stat'ed (the type of the open descriptor is what counts), and
// never takes more than manifest.MaxSize bytes, the kubelet's limit.
package manifestfs
