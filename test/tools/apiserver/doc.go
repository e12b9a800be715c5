// Package apiserver runs a real kube-apiserver and etcd on loopback for
// integration tests.
//
// The binaries are built from the Go module proxy (kube-apiserver from
// k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3 in the nested
// module ../etcd, whose v3.6 dependencies conflict with the ones
// k8s.io/kubernetes pins) and cached outside the clone, keyed by version,
// in $PODWATCH_BIN_CACHE or ${XDG_CACHE_HOME:-$HOME/.cache}/podwatch/bin: a
// cold build takes minutes, CI clones afresh, and a clean of the module
// cache should not cost a rebuild. ../build-binaries.sh does the same
// builds ahead of time.
//
// Start gives each test its own etcd and kube-apiserver, on free ports, with
// generated certificates and static bearer tokens; both are killed when the
// test ends.
package apiserver
