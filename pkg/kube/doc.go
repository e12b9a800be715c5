// Package kube delivers podwatch's Events to the Kubernetes API.
//
// Sink is a delivered events.Sink: pkg/events hands it one compressed Event
// at a time, already coalesced and rate bounded, and retries what Sink
// reports as retryable. Sink creates each Event once and then patches its
// count, lastTimestamp and the change it last counted (which a restart
// reads back to recognise a replay), re-creates an Event the API lost (TTL, deletion),
// re-targets an Event at the Node when its namespace is gone, and points Pod
// Events at the mirror pod's uid so `kubectl describe pod` finds them. A pod
// change is written before the kubelet has made its new mirror pod; Sink.Run
// moves it there once it appears.
//
// MirrorPods reads one mirror pod for pkg/follow, whose warnings add the
// kubelet's status of a container from it.
//
// Only the typed core/v1 client is used: the full clientset would register
// every API group's types in a node agent that writes Events and reads Pods.
//
// Restore rebuilds the Events a previous run wrote when the local store
// lacks them, with field selectors on involvedObject: never a cluster-wide
// list, which 5,000 nodes restarting together would turn into an outage.
package kube
