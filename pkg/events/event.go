package events

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Component is the source component of every Event podwatch records.
const Component = "podwatch"

// Occurrence is one happening to record.
type Occurrence struct {
	Object  v1.ObjectReference
	Type    string // Normal or Warning
	Reason  string
	Message string
}

// PodRef refers to a static pod (its mirror pod in the API).
func PodRef(namespace, name string) v1.ObjectReference {
	return v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: name}
}

// NodeRef refers to the node. kubectl describe node matches events by
// uid = node name, as the kubelet records them.
func NodeRef(node string) v1.ObjectReference {
	return v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node, UID: types.UID(node)}
}

// eventNamespace is where an Event about obj lives: the object's namespace,
// or default for cluster-scoped objects such as the node.
func eventNamespace(obj v1.ObjectReference) string {
	if obj.Namespace != "" {
		return obj.Namespace
	}
	return metav1.NamespaceDefault
}

// newEvent builds the first Event of an occurrence, named as client-go
// names them: "<object>.<hex unix nanos>".
func newEvent(o Occurrence, host string, now time.Time) *v1.Event {
	t := metav1.NewTime(now)
	return &v1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", o.Object.Name, now.UnixNano()),
			Namespace: eventNamespace(o.Object),
		},
		InvolvedObject:      o.Object,
		Reason:              o.Reason,
		Message:             o.Message,
		Type:                o.Type,
		Source:              v1.EventSource{Component: Component, Host: host},
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		ReportingController: Component,
		ReportingInstance:   Component + "-" + host,
	}
}
