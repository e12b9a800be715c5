package kube

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// userAgent names podwatch in the API server's audit log.
const userAgent = "podwatch"

// NewClient returns the core/v1 API for cfg, on a REST client whose scheme
// holds core/v1 only (see API).
func NewClient(cfg *rest.Config) (API, error) {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("kube: scheme: %w", err)
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = userAgent
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	return &restAPI{c: rc, params: runtime.NewParameterCodec(scheme)}, nil
}

type restAPI struct {
	c      rest.Interface
	params runtime.ParameterCodec
}

func (a *restAPI) Events(ns string) EventAPI { return &restEvents{a, ns} }
func (a *restAPI) Pods(ns string) PodAPI     { return &restPods{a, ns} }

type restEvents struct {
	*restAPI
	ns string
}

func (e *restEvents) Create(ctx context.Context, ev *v1.Event, opts metav1.CreateOptions) (*v1.Event, error) {
	out := &v1.Event{}
	err := e.c.Post().Namespace(e.ns).Resource("events").VersionedParams(&opts, e.params).
		Body(ev).Do(ctx).Into(out)
	return out, err
}

func (e *restEvents) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Event, error) {
	out := &v1.Event{}
	err := e.c.Get().Namespace(e.ns).Resource("events").Name(name).VersionedParams(&opts, e.params).
		Do(ctx).Into(out)
	return out, err
}

func (e *restEvents) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Event, error) {
	out := &v1.Event{}
	err := e.c.Patch(pt).Namespace(e.ns).Resource("events").Name(name).SubResource(subresources...).
		VersionedParams(&opts, e.params).Body(data).Do(ctx).Into(out)
	return out, err
}

func (e *restEvents) List(ctx context.Context, opts metav1.ListOptions) (*v1.EventList, error) {
	out := &v1.EventList{}
	err := e.c.Get().Namespace(e.ns).Resource("events").VersionedParams(&opts, e.params).
		Do(ctx).Into(out)
	return out, err
}

type restPods struct {
	*restAPI
	ns string
}

func (p *restPods) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Pod, error) {
	out := &v1.Pod{}
	err := p.c.Get().Namespace(p.ns).Resource("pods").Name(name).VersionedParams(&opts, p.params).
		Do(ctx).Into(out)
	return out, err
}
