// Package cri reads what the container runtime runs, through the CRI's v1
// RuntimeService on a unix socket, so that podwatch can tell whether the
// kubelet started the pod a manifest change asked for.
//
// Access to the runtime's socket is root-equivalent: whoever can connect to
// it can start a privileged container on the host, and a read-only mount of
// the socket does not stop connect(). So podwatch only connects when the
// operator asks it to, and Client exposes the read calls it needs
// (ListPodSandbox, ListContainers, ContainerStatus, PodSandboxStatus, and
// the GetContainerEvents stream) and nothing else, and a test holds
// Client's method set to that list.
//
// The calls are gRPC spoken on net/http's HTTP/2 client (grpc.go), and the
// few messages podwatch reads are decoded by field number (wire.go) into
// types holding the fields it uses (api.go), with the CRI's names. A gRPC
// library and k8s.io/cri-api's generated code would be linked into every
// podwatch, followed runtime or not, and their package initialisation
// (every CRI message's descriptor registered, gRPC's balancers, resolvers
// and tracing) runs at each start, the code and data it touches resident
// on every node for as long as podwatch runs. The tests check the decoding against the
// generated code and the calls against a real gRPC server.
package cri
