// Package cri reads what the container runtime runs, through the CRI
// (k8s.io/cri-api's generated v1 RuntimeService client on a unix socket),
// so that podwatch can tell whether the kubelet started the pod a manifest
// change asked for.
//
// Access to the runtime's socket is root-equivalent: whoever can connect to
// it can start a privileged container on the host, and a read-only mount of
// the socket does not stop connect(). So podwatch only connects when the
// operator asks it to, and Client exposes the read calls it needs
// (ListPodSandbox, ListContainers, ContainerStatus, PodSandboxStatus, and
// the GetContainerEvents stream) and nothing else: the generated client
// that could run, stop or exec is kept unexported, and a test holds
// Client's method set to that list.
//
// The connection is a plain gRPC client on the socket rather than
// k8s.io/cri-client's, which would link OpenTelemetry's SDK and
// k8s.io/component-base's logging into the agent for nothing podwatch uses.
package cri
