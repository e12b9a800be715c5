// Package kubeletconfig finds, in the kubelet's own configuration file, the
// settings podwatch must share with the kubelet: where static pod manifests
// live (staticPodPath), how often they are relisted (fileCheckFrequency)
// and, for --follow-pods, the container runtime's socket
// (containerRuntimeEndpoint). Reading them from the file the kubelet reads,
// rather than trusting podwatch's flags to be kept in step by hand, is what
// lets podwatch report on the folder the kubelet actually watches.
//
// Decoding follows the kubelet's loader (cmd/kubelet/app and
// pkg/kubelet/kubeletconfig/configfiles in k8s.io/kubernetes), so that a file
// gives podwatch the values it gives the kubelet:
//
//   - a document starting with '{' is JSON, anything else YAML (only the
//     first YAML document counts), converted with sigs.k8s.io/yaml and
//     decoded case-sensitively with sigs.k8s.io/json, as the kubelet's codecs do;
//   - apiVersion must be kubelet.config.k8s.io/v1beta1 and kind
//     KubeletConfiguration, the only version the kubelet accepts for it;
//   - unknown and duplicate fields are not errors: the kubelet decodes
//     strictly first, but then falls back to a lenient decode and starts
//     anyway, logging a warning. podwatch matches the outcome, not the log;
//   - a relative staticPodPath is joined to the folder of the config file,
//     after the file's own path is made absolute against the working
//     directory; an absolute one is kept as written;
//   - an empty staticPodPath (absent or "") means the kubelet runs no static
//     pods; an absent or zero fileCheckFrequency means 20s; an absent or
//     empty containerRuntimeEndpoint means unix:///run/containerd/containerd.sock.
//
// Deliberately not followed: the kubelet fails to start on a malformed value
// in any of its other fields; podwatch decodes only the fields it uses, so
// it does not notice. Decoding the full upstream type
// (k8s.io/kubelet/config/v1beta1) would, but it links k8s.io/component-base
// with Prometheus, OpenTelemetry and their init-time registries into a node
// agent that budgets its memory; the tests decode the same files with that
// type to keep the two in step. Drop-in files (--config-dir) and kubelet
// flags that override the file are not read either.
package kubeletconfig
