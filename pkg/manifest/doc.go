// Package manifest decodes, validates and defaults one static pod manifest the
// way the kubelet's file source does, without importing k8s.io/kubernetes.
//
// The kubelet's verdict is the reference: a manifest it would skip is invalid
// here, with an error that names the line where known. Content the kubelet
// accepts but silently ignores (unknown fields, a second YAML document,
// duplicate keys) is valid, and reported as Ignored so typos surface.
//
// The kubelet converts YAML to JSON with a YAML 1.1 library before decoding,
// so values are judged as that library reads them (unquoted yes/no/on/off are
// booleans, 010 is octal). Decode runs the same conversion for the verdict and
// parses the document a second time only to learn line numbers, which the
// conversion discards.
//
// One deliberate divergence: a YAML document whose aliases would expand it
// beyond 20 MiB is refused (ErrTooComplex) before conversion. The kubelet's
// library refuses classic alias bombs itself, but a few aliases to a large
// anchor would make it, and podwatch, copy out hundreds of megabytes.
package manifest
