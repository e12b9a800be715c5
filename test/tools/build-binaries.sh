#!/bin/sh
# Builds the kube-apiserver, etcd, kubectl and kubelet binaries the tests run, from
# the Go module proxy, into a cache outside the clone (CI clones fresh; a
# cold build takes minutes, a warm one nothing). The harness in ./apiserver
# runs the same builds itself when a binary is missing; this script only lets
# CI warm the cache in a separate, visible step.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=v1.37.2   # keep in step with apiserver.KubeVersion and go.mod
ETCD_VERSION=v3.6.16   # keep in step with apiserver.EtcdVersion and etcd/go.mod
bin="${PODWATCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podwatch/bin}"
mkdir -p "$bin"

build() { # dir package output [VAR=value...]: the variables go to go build
	dir=$1 pkg=$2 out=$3
	shift 3
	if [ -x "$out" ]; then echo "cached: $out"; return; fi
	echo "building $out"
	(cd "$dir" && env "$@" go build -trimpath -ldflags='-s -w' -o "$out.tmp.$$" "$pkg")
	mv "$out.tmp.$$" "$out"
}
build "$here" k8s.io/kubernetes/cmd/kube-apiserver "$bin/kube-apiserver-$KUBE_VERSION"
build "$here/etcd" go.etcd.io/etcd/server/v3 "$bin/etcd-$ETCD_VERSION"
build "$here" k8s.io/kubernetes/cmd/kubectl "$bin/kubectl-$KUBE_VERSION"
# The kubelet as Kubernetes releases it: static, without cgo. It is the
# longest build (about eleven minutes cold on two cores).
build "$here" k8s.io/kubernetes/cmd/kubelet "$bin/kubelet-$KUBE_VERSION" CGO_ENABLED=0
