//go:build linux

package kubelet_test

import (
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/podwatch/podwatch/pkg/follow"
)

// podwatch's container hash is the one the kubelet annotates each
// container with (kuberuntime's io.kubernetes.container.hash), for names
// and images of every shape a manifest may hold, and it changes with the
// image: what the follower's in-place verdict rests on.
func TestContainerHashIsTheKubelets(t *testing.T) {
	for _, c := range []v1.Container{
		{Name: "kube-apiserver", Image: "registry.k8s.io/kube-apiserver:v1.37.2"},
		{Name: "kube-apiserver", Image: "registry.k8s.io/kube-apiserver:v1.37.3"},
		{Name: "etcd", Image: "registry.k8s.io/etcd@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{Name: "x", Image: ""},
		{Name: "quote\"and<html>&", Image: "ünïcode/ímage:1"},
		// Fields outside the hash leave it as it is.
		{Name: "main", Image: "app:1", Command: []string{"sleep"}, Env: []v1.EnvVar{{Name: "A", Value: "b"}}},
	} {
		want := strconv.FormatUint(kubecontainer.HashContainer(&c), 16)
		if got := follow.ContainerHash(c.Name, c.Image); got != want {
			t.Errorf("ContainerHash(%q, %q) = %s, the kubelet's is %s", c.Name, c.Image, got, want)
		}
	}
	if follow.ContainerHash("main", "app:1") == follow.ContainerHash("main", "app:2") {
		t.Error("an image bump leaves the hash as it is")
	}
}
