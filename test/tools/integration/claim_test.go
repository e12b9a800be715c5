package integration

import (
	"context"
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// The API server's Event carries the claim of the change: the create
// the first occurrence's, the patch of the compressed Event the latest.
func TestAPIEventCarriesTheLatestClaim(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	a := startAgent(t, s.Config(apiserver.PodwatchToken), nil)
	createMirrorPod(t, c, podNS, podName, "hash1")
	o := events.Occurrence{Object: events.PodRef(podNS, podName), Type: v1.EventTypeNormal, Reason: types.ReasonUpdated,
		Message: "kube-apiserver.yaml: image a -> b", Key: "a>b",
		Claim: &types.Claim{ID: 1, Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Bounded(0, 1)}}
	claimed := func(what string, count int32, id uint64, unbounded bool) {
		t.Helper()
		eventually(t, what, func(ctx context.Context) (bool, error) {
			evs, err := describePodEvents(ctx, c, podNS, podName, "hash1")
			m := byReason(evs, types.ReasonUpdated)
			if err != nil || len(m) != 1 || m[0].Count != count {
				return false, err
			}
			var cl types.Claim
			if err := json.Unmarshal([]byte(m[0].Annotations[events.AnnotationClaim]), &cl); err != nil {
				return false, nil // not written yet as wanted
			}
			return cl.ID == id && (cl.Before.Max == nil) == unbounded, nil
		})
	}
	a.record(t, o, 1)
	claimed("the created Event with claim 1", 1, 1, false)
	o.Message = "kube-apiserver.yaml: image a -> b, worded otherwise"
	o.Claim = &types.Claim{ID: 5, Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Range{}}
	a.record(t, o, 1)
	claimed("the patched Event with claim 5, unbounded", 2, 5, true)
}
