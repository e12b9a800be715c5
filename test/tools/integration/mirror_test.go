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
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// podwatch writes the UPDATE as soon as the manifest changes, before the
// kubelet has recreated the mirror pod under the new config hash: the API
// stores it within seconds on the old mirror pod, so that `kubectl describe
// pod` shows it during a restart that is stuck, and the sink moves it to
// the new mirror pod within seconds of its creation, with a merge patch of
// involvedObject.uid that the real API server accepts on core/v1 Events.
// The key interval is a minute: the move does not wait for it.
func TestUpdateStoredAtOnceAndMovedToTheNewMirrorPod(t *testing.T) {
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
	a := startAgentWith(t, cfg, func(o *events.Options) { o.KeyInterval = time.Minute }, nil)
	pod := events.PodRef(podNS, podName)
	addedUnder(t, a, c, "hash1")
	for len(gets) > 0 {
		<-gets
	}

	ctx := context.Background()
	recorded := time.Now()
	a.record(t, occ(pod, v1.EventTypeNormal, types.ReasonUpdated, "spec.containers[c].image: a -> b"), 1)
	var stored time.Duration
	poll(t, "UPDATE under the old mirror pod's hash", func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, "hash1")
		stored = time.Since(recorded)
		return len(byReason(evs, types.ReasonUpdated)) == 1, err
	})
	if stored > 10*time.Second {
		t.Errorf("UPDATE stored %v after it was recorded, want within 10s", stored)
	}
	out, err := s.Kubectl(ctx, apiserver.AdminToken, "describe", "pod", "-n", podNS, podName)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "StaticPodUpdated") {
		t.Errorf("kubectl describe pod on the old mirror pod does not show the UPDATE:\n%s", out)
	}

	// The restart is stuck for a while: the sink has looked for the new
	// mirror pod a few times (the write's read and three looks) when the
	// kubelet replaces it.
	for range 4 {
		select {
		case <-gets:
		case <-time.After(30 * time.Second):
			t.Fatal("the sink stopped reading the mirror pod")
		}
	}
	if err := c.Pods(podNS).Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	createMirrorPod(t, c, podNS, podName, "hash2")
	created := time.Now()
	var moved time.Duration
	poll(t, "kubectl describe pod on the new mirror pod showing the UPDATE", func(ctx context.Context) (bool, error) {
		out, err = s.Kubectl(ctx, apiserver.AdminToken, "describe", "pod", "-n", podNS, podName)
		moved = time.Since(created)
		return strings.Contains(out, "StaticPodUpdated"), err
	})
	if moved > 10*time.Second {
		t.Errorf("UPDATE in kubectl describe of the new mirror pod %v after its creation, want within 10s", moved)
	}
	if !strings.Contains(out, "hash2") {
		t.Errorf("kubectl describe pod is not the new mirror pod's:\n%s", out)
	}
	evs, err := describePodEvents(ctx, c, podNS, podName, "hash1")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(byReason(evs, types.ReasonUpdated)); n != 0 {
		t.Errorf("%d UPDATEs left under the old mirror pod's hash", n)
	}
	t.Logf("UPDATE stored on the old mirror pod %v after it was recorded; in kubectl describe of the new mirror pod %v after its creation",
		stored.Round(time.Millisecond), moved.Round(time.Millisecond))
}

// poll polls cond every 20ms until it holds or 30s pass: finer than
// eventually, because the time it takes is measured.
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
