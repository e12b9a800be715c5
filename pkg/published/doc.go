// Package published keeps the diff's published state in --state-dir, so a
// restart announces only what changed while podwatch was down.
//
// On disk the state is state.json (what waits to settle, what was reported,
// the salt) and PodShards files pods-NN.json, each holding the published
// pods whose key hashes to NN. A change rewrites state.json, which stays
// small, and only the shards whose pods changed, so a flapping manifest on a
// node with thousands of pods does not rewrite them all. Every value an
// UPDATE message only names as changed is written as a digest under the
// state's salt (diff.ScrubbedPod): the files hold no secret from the
// manifests.
//
// Writes happen off the diff loop, in the Persister's goroutine, which
// writes only the newest state handed over.
package published
