// Package oracle runs the kubelet's own static-pod file source, imported from
// k8s.io/kubernetes, and reports which manifests it accepts and why it
// rejects the others. podwatch claims to predict exactly that verdict, so
// its tests compare pkg/manifest against this package rather than against
// expectations someone typed in by hand.
//
// FileSource drives the real source end to end (directory listing, reading,
// decoding, defaulting, validation, the pod config mux). Decode follows the
// same decode path through exported kubernetes packages without a directory
// or goroutines, which makes it cheap enough for fuzzing; a test keeps the
// two in agreement on the corpus.
//
// This lives in its own module so that k8s.io/kubernetes never enters the
// dependency graph of podwatch itself.
package oracle
