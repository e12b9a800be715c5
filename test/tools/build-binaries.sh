#!/bin/sh
# Builds the kube-apiserver, etcd, kubectl, kubelet, promtool and crictl binaries the
# tests run, from the Go module proxy, into a cache outside the clone (CI
# clones fresh; a cold build takes minutes, a warm one nothing). The harnesses
# in ./apiserver and ./monitoring run the same builds themselves when a
# binary is missing; this script only lets CI warm the cache in a separate,
# visible step.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=v1.37.2   # keep in step with apiserver.KubeVersion and go.mod
ETCD_VERSION=v3.6.16   # keep in step with apiserver.EtcdVersion and etcd/go.mod
CRICTL_VERSION=v1.37.0 # keep in step with apiserver.CrictlVersion and crictl/go.mod
PROMETHEUS_VERSION=v0.316.0 # promtool; keep in step with monitoring/promtool_test.go and monitoring/go.mod
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
# promtool for test/tools/monitoring, with no service discovery but
# Kubernetes' (the snippets use static and Kubernetes discovery only; the
# other clouds' SDKs would double its build).
build "$here/monitoring" github.com/prometheus/prometheus/cmd/promtool "$bin/promtool-$PROMETHEUS_VERSION" "GOFLAGS=${GOFLAGS:+$GOFLAGS }-tags=remove_all_sd,enable_kubernetes_sd"
# crictl for test/tools/followcost, from its own module: cri-tools wants
# other k8s.io versions than the kubelet build pins.
build "$here/crictl" sigs.k8s.io/cri-tools/cmd/crictl "$bin/crictl-$CRICTL_VERSION"
