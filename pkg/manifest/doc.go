// Package manifest decodes, validates and defaults one static pod manifest the
// way the kubelet's file source does, without importing k8s.io/kubernetes.
//
// The kubelet's verdict is the reference: a manifest it would skip is invalid
// here, with an error that names the line where known. Content the kubelet
// accepts but silently ignores (unknown fields, a second YAML document,
// duplicate keys) is valid, and reported as Ignored so typos surface.
package manifest
