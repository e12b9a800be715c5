package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestMirrorPodsReadOnePodWithGet holds MirrorPods to what the follower
// relies on: the mirror pod with its status, nil for a pod that is missing
// or not a mirror pod, an error that says which pod otherwise, and never
// a verb beyond get.
func TestMirrorPodsReadOnePodWithGet(t *testing.T) {
	mirror := mirrorPod("hash1")
	mirror.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "etcd", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "not-a-mirror"}}
	cs := fake.NewClientset(mirror, plain)
	m := NewMirrorPods(typed{cs.CoreV1()})
	ctx := context.Background()

	got, err := m.MirrorPod(ctx, "kube-system", mirror.Name)
	if err != nil || got == nil {
		t.Fatalf("MirrorPod = %v, %v; want the mirror pod", got, err)
	}
	if got.Annotations[MirrorAnnotation] != "hash1" || got.Status.ContainerStatuses[0].State.Waiting.Reason != "CrashLoopBackOff" {
		t.Errorf("MirrorPod lost the hash or the status: %+v", got)
	}
	for _, name := range []string{"missing", plain.Name} {
		if got, err := m.MirrorPod(ctx, "kube-system", name); got != nil || err != nil {
			t.Errorf("MirrorPod(%s) = %v, %v; want nil, nil", name, got, err)
		}
	}

	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource("pods"), mirror.Name, errors.New("RBAC"))
	})
	_, err = m.MirrorPod(ctx, "kube-system", mirror.Name)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("MirrorPod on a refusal = %v, want the Forbidden error", err)
	}
	if want := "kube: get mirror pod kube-system/" + mirror.Name + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not name the pod", err)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() != "get" || a.GetResource().Resource != "pods" {
			t.Errorf("MirrorPods did %s %s; only get pods is granted", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
