#!/bin/sh
# Builds the kube-apiserver, etcd and kubectl binaries the integration tests run, from
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

build() { # dir package output
	if [ -x "$3" ]; then echo "cached: $3"; return; fi
	echo "building $3"
	(cd "$1" && go build -trimpath -ldflags='-s -w' -o "$3.tmp.$$" "$2")
	mv "$3.tmp.$$" "$3"
}
build "$here" k8s.io/kubernetes/cmd/kube-apiserver "$bin/kube-apiserver-$KUBE_VERSION"
build "$here/etcd" go.etcd.io/etcd/server/v3 "$bin/etcd-$ETCD_VERSION"
build "$here" k8s.io/kubernetes/cmd/kubectl "$bin/kubectl-$KUBE_VERSION"
