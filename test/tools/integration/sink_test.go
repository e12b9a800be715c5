package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

func occ(obj v1.ObjectReference, typ, reason, msg string) events.Occurrence {
	return events.Occurrence{Object: obj, Type: typ, Reason: reason, Message: msg}
}

// The lifecycle of one static pod: kubectl describe pod finds ADD under the
// first mirror pod's hash, UPDATE and REMOVE under the recreated one's;
// kubectl describe node finds the node's Events.
func TestPodAndNodeEventsAsKubectlDescribeFindsThem(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	pod := events.PodRef(podNS, podName)

	addedUnder(t, a, c, "hash1")

	// The kubelet recreates the mirror pod with the new config hash.
	if err := c.Pods(podNS).Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	createMirrorPod(t, c, podNS, podName, "hash2")
	a.record(t, occ(pod, v1.EventTypeNormal, types.ReasonUpdated, "updated"), 1)
	eventually(t, "UPDATE under hash2", func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, "hash2")
		return len(byReason(evs, types.ReasonUpdated)) == 1, err
	})

	// The kubelet deletes the mirror pod of a removed static pod.
	if err := c.Pods(podNS).Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	a.record(t, occ(pod, v1.EventTypeNormal, types.ReasonRemoved, "removed"), 1)
	eventually(t, "REMOVE under the last hash", func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, "hash2")
		return len(byReason(evs, types.ReasonRemoved)) == 1, err
	})

	a.record(t, occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonPathMissing, "/etc/kubernetes/manifests is missing"), 3)
	eventually(t, "node Event with count 3", func(ctx context.Context) (bool, error) {
		evs, err := describeNodeEvents(ctx, c, node)
		m := byReason(evs, types.ReasonPathMissing)
		return len(m) == 1 && m[0].Count == 3, err
	})
	evs, err := describeNodeEvents(ctx, c, node)
	if err != nil {
		t.Fatal(err)
	}
	e := evs[0]
	if e.ReportingController != events.Component || e.ReportingInstance != "podwatch-"+node ||
		e.Source.Host != node || e.InvolvedObject.APIVersion != "v1" || e.Namespace != metav1.NamespaceDefault {
		t.Errorf("node Event fields: %+v", e)
	}
}

// A manifest that stays invalid is relisted again and again: one Event whose
// count is every occurrence.
func TestInvalidManifestOneEventWithFullCount(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	o := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonInvalid, "bad.yaml: line 3: mapping values are not allowed")
	o.File = "bad.yaml"
	const n = 200
	a.record(t, o, n)
	eventually(t, fmt.Sprintf("one InvalidManifest Event with count %d", n), func(ctx context.Context) (bool, error) {
		evs, err := describeNodeEvents(ctx, c, node)
		m := byReason(evs, types.ReasonInvalid)
		if len(m) > 1 {
			return false, fmt.Errorf("%d Events for one happening", len(m))
		}
		return len(m) == 1 && m[0].Count == n, err
	})
	if st := a.apiStats(); st.Written >= n/2 {
		t.Errorf("%d writes for %d occurrences: not coalesced", st.Written, n)
	}
}

// The API server goes away for a while and comes back on the same etcd:
// every occurrence recorded meanwhile arrives.
func TestAPIServerOutageLosesNoCount(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	o := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonWatchDegraded, "inotify watch lost")
	a.record(t, o, 2)
	eventually(t, "count 2", nodeCount(c, types.ReasonWatchDegraded, 2))

	s.StopAPIServer()
	a.record(t, o, 5)
	other := occ(events.NodeRef(node), v1.EventTypeNormal, types.ReasonPathMissing, "new during the outage")
	a.record(t, other, 4)
	// Wait until the sink has seen the outage (failed writes), not a fixed time.
	eventually(t, "failed writes during the outage", func(context.Context) (bool, error) {
		return a.apiStats().Failed >= 3, nil
	})
	a.record(t, o, 3)
	if err := s.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "count 10 after the restart", nodeCount(c, types.ReasonWatchDegraded, 10))
	eventually(t, "the Event created during the outage", nodeCount(c, types.ReasonPathMissing, 4))
	if st := a.apiStats(); st.Dropped != (events.Drops{}) {
		t.Errorf("drops: %+v", st.Dropped)
	}
}

func nodeCount(c corev1client.CoreV1Interface, reason string, want int32) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		evs, err := describeNodeEvents(ctx, c, node)
		if err != nil {
			return false, nil // the API may still be coming up
		}
		m := byReason(evs, reason)
		if len(m) > 1 {
			return false, fmt.Errorf("%d Events for one happening", len(m))
		}
		return len(m) == 1 && m[0].Count == want, nil
	}
}

// An Event deleted behind podwatch's back (the API's TTL, or a person) is
// created again with the full count on the next write.
func TestDeletedEventRecreatedWithFullCount(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	o := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonDuplicate, "two files define kube-system/x")
	a.record(t, o, 3)
	eventually(t, "count 3", nodeCount(c, types.ReasonDuplicate, 3))
	evs, err := describeNodeEvents(context.Background(), c, node)
	if err != nil {
		t.Fatal(err)
	}
	name := evs[0].Name
	if err := c.Events(evs[0].Namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a.record(t, o, 1)
	eventually(t, "re-created with count 4", nodeCount(c, types.ReasonDuplicate, 4))
	evs, _ = describeNodeEvents(context.Background(), c, node)
	if evs[0].Name != name {
		t.Errorf("re-created as %s, want the same name %s", evs[0].Name, name)
	}
}

// A token without rights: the error is logged once, the write is retried,
// and once the rights are granted the full count arrives.
func TestForbiddenRetriedUntilGranted(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.NobodyToken), nil)
	o := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonUnreadable, "permission denied")
	a.record(t, o, 5)
	eventually(t, "repeated forbidden writes", func(context.Context) (bool, error) {
		return a.apiStats().Failed >= 3, nil
	})
	if n := strings.Count(a.log.String(), "refused podwatch's credentials"); n != 1 {
		t.Errorf("forbidden logged %d times, want once:\n%s", n, a.log.String())
	}
	if st := a.apiStats(); st.Dropped != (events.Drops{}) || st.Pending != 1 {
		t.Errorf("while forbidden: %+v; want nothing dropped, 1 pending", st)
	}
	bindUser(t, s, "nobody")
	eventually(t, "count 5 once granted", nodeCount(c, types.ReasonUnreadable, 5))
}

// A static pod in a namespace that does not exist: its Event goes to the Node.
func TestMissingNamespaceRetargetedAtNode(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	a.record(t, occ(events.PodRef("gone", "x-"+node), v1.EventTypeNormal, types.ReasonAdded, "added"), 2)
	eventually(t, "the pod's Event on the Node", func(ctx context.Context) (bool, error) {
		evs, err := describeNodeEvents(ctx, c, node)
		m := byReason(evs, types.ReasonAdded)
		return len(m) == 1 && m[0].Count == 2 && m[0].Annotations[kube.AnnotationRetargeted] == "gone/x-"+node, err
	})
}

// The agent restarts without its local store: Restore finds its Events with
// field selectors, and counts continue on the same Events.
func TestWarmStartFromAPIContinuesCounts(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	cfg := s.Config(apiserver.PodwatchToken)
	createMirrorPod(t, c, podNS, podName, "hash1")
	pod := events.PodRef(podNS, podName)
	a := startAgent(t, cfg, nil)
	podOcc := occ(pod, v1.EventTypeWarning, types.ReasonIgnored, "unknown field spec.foo")
	podOcc.File = "kube-apiserver.yaml"
	nodeOcc := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonWatchDegraded, "watch lost")
	a.record(t, podOcc, 3)
	a.record(t, nodeOcc, 2)
	eventually(t, "first run delivered", nodeCount(c, types.ReasonWatchDegraded, 2))
	eventually(t, "pod Event delivered", podCount(c, types.ReasonIgnored, 3))
	a.stop()

	restored := kube.Restore(context.Background(), a.client, node, nil, nil, pod)
	if len(restored) != 2 {
		t.Fatalf("restored %d Events, want 2: %+v", len(restored), restored)
	}
	b := startAgent(t, cfg, restored)
	b.record(t, podOcc, 1)
	b.record(t, nodeOcc, 1)
	eventually(t, "node count continues at 3", nodeCount(c, types.ReasonWatchDegraded, 3))
	eventually(t, "pod count continues at 4", podCount(c, types.ReasonIgnored, 4))
}

func podCount(c corev1client.CoreV1Interface, reason string, want int32) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, "hash1")
		m := byReason(evs, reason)
		if len(m) > 1 {
			return false, fmt.Errorf("%d Events for one happening", len(m))
		}
		return len(m) == 1 && m[0].Count == want, err
	}
}

// The deploy ServiceAccount's own token: the ClusterRole is enough for
// everything the agent does, and no more.
func TestDeployServiceAccountRoleEnoughAndNoMore(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	createMirrorPod(t, c, podNS, podName, "hash1")
	token := serviceAccountToken(t, c, "podwatch", "podwatch")
	cfg := s.Config(token)
	a := startAgent(t, cfg, nil)
	a.record(t, occ(events.PodRef(podNS, podName), v1.EventTypeNormal, types.ReasonAdded, "added"), 1)
	a.record(t, occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonPathMissing, "missing"), 2)
	eventually(t, "pod Event under the mirror hash (pods get allowed)", podCount(c, types.ReasonAdded, 1))
	eventually(t, "node Event patched to 2", nodeCount(c, types.ReasonPathMissing, 2))
	if n := len(kube.Restore(ctx, a.client, node, nil, nil, events.PodRef(podNS, podName))); n != 2 {
		t.Errorf("Restore with the SA found %d Events, want 2 (events list allowed)", n)
	}
	// The same identity through client-go's typed client, for what the
	// agent never calls.
	sa, err := corev1client.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Pods(podNS).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list pods: err = %v, want Forbidden", err)
	}
	if _, err := sa.Secrets(podNS).Get(ctx, "anything", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get secrets: err = %v, want Forbidden", err)
	}
	if _, err := sa.Events(podNS).Watch(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("watch events: err = %v, want Forbidden", err)
	}
	if err := sa.Events(podNS).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete events: err = %v, want Forbidden", err)
	}
	if strings.Contains(a.log.String(), "refused") {
		t.Errorf("the agent hit a forbidden request:\n%s", a.log.String())
	}
}
