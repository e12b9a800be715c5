//go:build linux

package kubelet_test

import (
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
)

// The transcript's check takes a late file source's hedge off only an
// UPDATE whose claim has no bound, and only after the transcript's words.
func TestLateHedgeOffOnlyForAnUnboundedClaim(t *testing.T) {
	const pod = "web-node-1"
	golden := "web.yaml: image 1 → 2: the kubelet restarts the pod (new UID)"
	want := [][]string{{"Normal", types.ReasonUpdated, "<t>", "podwatch", golden}}
	hedged := [][]string{{"Normal", types.ReasonUpdated, "<t>", "podwatch", golden + "; may restart it more times first (its relist came late)"}}
	event := func(c types.Claim) v1.Event {
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return v1.Event{
			ObjectMeta:     metav1.ObjectMeta{Annotations: map[string]string{events.AnnotationClaim: string(raw)}},
			InvolvedObject: v1.ObjectReference{Kind: types.KindPod, Name: pod},
			Reason:         types.ReasonUpdated,
		}
	}
	unbounded := event(types.Claim{Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Range{Min: 0}})
	bounded := event(types.Claim{Op: types.OpUpdate, At: types.ClaimAtWatch, Before: types.Bounded(0, 0)})
	if got := lateHedgeOff(t, hedged, want, []v1.Event{unbounded}, pod); got[0][4] != golden {
		t.Errorf("unbounded claim: message %q, want the transcript's %q", got[0][4], golden)
	}
	if got := lateHedgeOff(t, hedged, want, []v1.Event{bounded}, pod); got[0][4] == golden {
		t.Error("a bounded claim's extra words were taken off")
	}
	other := [][]string{{"Normal", types.ReasonUpdated, "<t>", "podwatch", "web.yaml: image 1 → 3: the kubelet restarts the pod (new UID); may restart it more times first"}}
	if got := lateHedgeOff(t, other, want, []v1.Event{unbounded}, pod); got[0][4] != other[0][4] {
		t.Error("words other than the transcript's were changed")
	}
	if hedged[0][4] == golden {
		t.Error("lateHedgeOff changed the rows it was given")
	}
}
