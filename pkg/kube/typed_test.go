package kube

import corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

// typed adapts client-go's typed core/v1 client (here, the fake clientset's)
// to API, so the unit tests run on client-go's fake.
type typed struct{ c corev1client.CoreV1Interface }

func (t typed) Events(ns string) EventAPI { return t.c.Events(ns) }
func (t typed) Pods(ns string) PodAPI     { return t.c.Pods(ns) }
