package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// podwatch writes the UPDATE as soon as the manifest changes, before the
// kubelet has recreated the mirror pod under the new config hash: the sink
// waits for the new pod, so `kubectl describe pod` on it shows the UPDATE.
func TestUpdateWrittenBeforeTheMirrorPodIsRecreated(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	cfg := s.Config(apiserver.PodwatchToken)
	gets := make(chan struct{}, 64)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods/"+podName) {
				select {
				case gets <- struct{}{}:
				default:
				}
			}
			return rt.RoundTrip(r)
		})
	})
	a := startAgent(t, cfg, nil)
	pod := events.PodRef(podNS, podName)
	addedUnder(t, a, c, "hash1")
	for len(gets) > 0 {
		<-gets
	}

	a.record(t, occ(pod, v1.EventTypeNormal, types.ReasonUpdated, "spec.containers[c].image: a -> b"), 1)
	// The sink read the mirror pod and found the old hash; only now does
	// the kubelet replace it.
	select {
	case <-gets:
	case <-time.After(10 * time.Second):
		t.Fatal("the sink never read the mirror pod for the UPDATE")
	}
	ctx := context.Background()
	if err := c.Pods(podNS).Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	createMirrorPod(t, c, podNS, podName, "hash2")
	eventually(t, "UPDATE under hash2", func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, "hash2")
		return len(byReason(evs, types.ReasonUpdated)) == 1, err
	})
	evs, err := describePodEvents(ctx, c, podNS, podName, "hash1")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(byReason(evs, types.ReasonUpdated)); n != 0 {
		t.Errorf("%d UPDATEs under the old mirror pod's hash", n)
	}
	out, err := s.Kubectl(ctx, apiserver.AdminToken, "describe", "pod", "-n", podNS, podName)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "StaticPodUpdated") {
		t.Errorf("kubectl describe pod on the new mirror pod does not show the UPDATE:\n%s", out)
	}
}
