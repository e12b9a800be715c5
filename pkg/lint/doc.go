// Package lint is the one-shot form of podwatch's verdicts, for CI pipelines
// and for people about to edit a manifest: Check reads paths the way the
// kubelet's file source lists --pod-manifest-path and reports what the
// kubelet would reject, and what it would accept although nobody meant it to.
//
// Each path is checked as if it were the kubelet's --pod-manifest-path on its
// own, so the directory-level checks (two files defining one pod, editor and
// tool leftovers, entries that are not regular files) apply to directories
// only, never across paths: two paths are two kubelets.
//
// Decoding and validation are pkg/manifest's, so check and the agent never
// disagree about a file. Listing follows the kubelet: names starting with "."
// are skipped, entries are stat'ed (symlinks followed) before they are opened,
// subdirectories are not entered, and only regular files are read, never a
// FIFO, socket or device that would block or have side effects.
//
// The permission checks follow the CIS Kubernetes Benchmark (section 1.1):
// whoever can write a manifest, or the directory it sits in, can run anything
// as root on the node through the kubelet. They only make sense on the node
// itself; a CI job linting a checkout skips them with Options.Skip.
//
// Messages never quote file content: decode errors are manifest.Error's, which
// are already redacted, and the rest name only files, modes and owners.
package lint
