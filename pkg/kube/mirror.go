package kube

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MirrorPods reads mirror pods for pkg/follow, whose warnings add what the
// kubelet publishes in their status. Each read is one get of one pod, on
// the client the Events go through, so --kube-api-qps and --kube-api-burst
// bound both; the RBAC stays get on pods.
type MirrorPods struct {
	api API
}

// NewMirrorPods reads mirror pods through api.
func NewMirrorPods(api API) *MirrorPods { return &MirrorPods{api: api} }

// MirrorPod returns the mirror pod namespace/name: nil and no error when
// no pod has that name or the pod there is not a mirror pod (no
// MirrorAnnotation), which is then not the kubelet's.
func (m *MirrorPods) MirrorPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := m.api.Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kube: get mirror pod %s/%s: %w", namespace, name, err)
	}
	if _, ok := pod.Annotations[MirrorAnnotation]; !ok {
		return nil, nil
	}
	return pod, nil
}
