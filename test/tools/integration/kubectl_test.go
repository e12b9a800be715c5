package integration

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// What an operator sees with the real kubectl: `kubectl describe pod` on
// the mirror pod lists podwatch's pod Events with their counts, and
// `kubectl get events` lists the node's with the full count.
func TestKubectlShowsCompressedEvents(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	pod := events.PodRef(podNS, podName)
	createMirrorPod(t, c, podNS, podName, "hash1")

	a.record(t, occ(pod, v1.EventTypeNormal, types.ReasonAdded, "kube-apiserver.yaml: static pod kube-system/kube-apiserver-node-1 added"), 1)
	a.record(t, occ(pod, v1.EventTypeWarning, types.ReasonDuplicate, "pod kube-system/kube-apiserver-node-1 is defined by kube-apiserver.yaml, kube-apiserver.yaml.bak"), 7)
	bad := occ(events.NodeRef(node), v1.EventTypeWarning, types.ReasonInvalid, "etcd.yaml: line 12: spec.containers[0].image: Required value")
	bad.File = "etcd.yaml"
	a.record(t, bad, 200)
	eventually(t, "pod Events and the node's count 200 in the API", func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, "hash1")
		if err != nil || len(byReason(evs, types.ReasonAdded)) != 1 {
			return false, err
		}
		if d := byReason(evs, types.ReasonDuplicate); len(d) != 1 || d[0].Count != 7 {
			return false, nil
		}
		return nodeCount(c, types.ReasonInvalid, 200)(ctx)
	})

	ctx := context.Background()
	out, err := s.Kubectl(ctx, apiserver.AdminToken, "describe", "pod", "-n", podNS, podName)
	if err != nil {
		t.Fatal(err)
	}
	events := out[strings.Index(out, "Events:"):]
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Normal\s+StaticPodAdded\s+.*podwatch.*added`),
		regexp.MustCompile(`Warning\s+DuplicatePod\s+.*\(x7 over .*\).*podwatch.*kube-apiserver\.yaml\.bak`),
	} {
		if !want.MatchString(events) {
			t.Errorf("kubectl describe pod: no line matching %s in\n%s", want, events)
		}
	}

	out, err = s.Kubectl(ctx, apiserver.AdminToken, "get", "events", "--all-namespaces",
		"--field-selector", "involvedObject.kind=Node,involvedObject.name="+node,
		"-o", "custom-columns=REASON:.reason,COUNT:.count,SOURCE:.source.component,MESSAGE:.message", "--no-headers")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^InvalidManifest\s+200\s+podwatch\s+etcd\.yaml: line 12`).MatchString(out) {
		t.Errorf("kubectl get events: no InvalidManifest with count 200 in\n%s", out)
	}
	t.Logf("kubectl describe pod, Events:\n%s", events)
}
