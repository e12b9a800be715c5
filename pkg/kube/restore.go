package kube

import (
	"context"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/podwatch/podwatch/pkg/events"
)

// Restore returns the Events to hand to events.New at start: the local
// store's, plus those this node's podwatch wrote to the API about objects
// the store has nothing on (a fresh state dir after a reimage, say). The
// objects asked about are the Node, every Pod in local and the pods given
// (the published static pods); each is one list with field selectors on
// involvedObject and source, never a list of every Event in the cluster.
//
// Credentials that cannot list Events (the kubelet's own kubeconfig) or an
// unreachable API leave local as it is: warm start is best effort, and a
// missed Event only means its next occurrence starts a new one.
func Restore(ctx context.Context, client API, node string, local []v1.Event, log *slog.Logger, pods ...v1.ObjectReference) []v1.Event {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	type object struct{ kind, namespace, name string }
	have := map[object]bool{}
	known := map[[2]string]bool{}
	for i := range local {
		o := local[i].InvolvedObject
		have[object{o.Kind, o.Namespace, o.Name}] = true
		known[[2]string{local[i].Namespace, local[i].Name}] = true
	}
	want := []object{{"Node", "", node}}
	for i := range local {
		if o := local[i].InvolvedObject; o.Kind == "Pod" {
			want = append(want, object{o.Kind, o.Namespace, o.Name})
		}
	}
	for _, p := range pods {
		want = append(want, object{"Pod", p.Namespace, p.Name})
	}
	// A full slice: appending must not write into the caller's array.
	out := local[:len(local):len(local)]
	asked := map[object]bool{}
	for _, o := range want {
		if have[o] || asked[o] {
			continue
		}
		asked[o] = true
		ns := o.namespace
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		sel := fields.Set{
			"involvedObject.kind": o.kind,
			"involvedObject.name": o.name,
			"source":              events.Component,
		}
		list, err := client.Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
		if err != nil {
			if apierrors.IsForbidden(err) {
				log.Info("cannot list Events: warm start uses the local store only", "err", err)
			} else {
				log.Warn("warm start from the API failed: using the local store only", "err", err)
			}
			return out
		}
		for _, ev := range list.Items {
			if ev.Source.Host != node || known[[2]string{ev.Namespace, ev.Name}] {
				continue
			}
			if _, re := ev.Annotations[AnnotationRetargeted]; re {
				// Its key (a Pod's) cannot be rebuilt from the Node copy.
				continue
			}
			if ev.InvolvedObject.Kind == "Pod" {
				// The API copy carries the mirror pod's uid; the compression
				// key does not, or the next occurrence would start a new Event.
				ev.InvolvedObject.UID = ""
			}
			ev.ResourceVersion, ev.UID, ev.ManagedFields = "", "", nil
			known[[2]string{ev.Namespace, ev.Name}] = true
			out = append(out, ev)
		}
	}
	return out
}
