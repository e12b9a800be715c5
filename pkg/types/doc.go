// Package types holds the values that flow between podwatch's stages: the
// file source's Snapshot of the manifest folder, the decoded Pod each valid
// file holds, the Changes the diff derives from them, what the relist
// detector observes of the kubelet's relists (RelistObservation), and what
// the follower finds in each poll of the container runtime
// (FollowObservation).
//
// It imports nothing of podwatch, so every stage can depend on it without
// depending on another stage's I/O: pkg/diff stays pure, and pkg/lint and
// pkg/metrics read snapshots without linking the watcher.
package types
