package kube

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// API is the slice of the core/v1 API podwatch uses: Events, and reading a
// mirror pod. client-go's typed core/v1 client has these methods, but its
// package registers every API group of the clientset at start, and a node
// agent that only writes Events and reads Pods would keep all those types
// resident for nothing; NewClient builds the same calls on a REST client
// that knows core/v1 only.
type API interface {
	Events(namespace string) EventAPI
	Pods(namespace string) PodAPI
}

// EventAPI is the part of client-go's EventInterface podwatch calls.
type EventAPI interface {
	Create(ctx context.Context, ev *v1.Event, opts metav1.CreateOptions) (*v1.Event, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Event, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Event, error)
	List(ctx context.Context, opts metav1.ListOptions) (*v1.EventList, error)
}

// PodAPI is the part of client-go's PodInterface podwatch calls.
type PodAPI interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Pod, error)
}
