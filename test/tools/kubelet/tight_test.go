//go:build linux

package kubelet_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
)

// A podwatch that claims before {0, null} of every change agrees with any
// kubelet by covers; the judge's tightness check is what fails it, read
// from the Events as the judge reads a real run's.
func TestNullEverywhereFails(t *testing.T) {
	const pod = "default/web-node"
	said := func(bounded bool) []v1.Event {
		var evs []v1.Event
		for i, op := range []types.Op{types.OpAdd, types.OpUpdate, types.OpRemove} {
			c := types.Claim{ID: uint64(i + 1), Op: op, At: types.ClaimAtWatch, Before: types.Range{}}
			if bounded {
				c.Before = types.Bounded(0, 1)
			}
			raw, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			reason := map[types.Op]string{types.OpAdd: types.ReasonAdded, types.OpUpdate: types.ReasonUpdated, types.OpRemove: types.ReasonRemoved}[op]
			evs = append(evs, v1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Annotations: map[string]string{events.AnnotationClaim: string(raw)}},
				InvolvedObject: v1.ObjectReference{Kind: types.KindPod, Namespace: "default", Name: "web-node"},
				Reason:         reason,
				Count:          1,
			})
		}
		return evs
	}
	runs := func(bounded bool) []result {
		w := claimWidths(said(bounded), pod)
		return []result{
			{name: "a-quiet", family: "a-quiet", quiet: true, agree: true, widths: w},
			{name: "b-quiet", family: "b-quiet", quiet: true, agree: true, widths: w},
			// The shared kubelet's runs are not held to it: its file
			// source is late often.
			{name: "a", family: "a", agree: true, widths: claimWidths(said(false), pod)},
		}
	}
	if got := claimWidths(said(false), pod); got.behind != 3 || len(got.bounded) != 0 {
		t.Fatalf("null everywhere read as %+v, want 3 unbounded", got)
	}
	if msg := untight(runs(false)); !strings.Contains(msg, "6 of podwatch's 6 claims") {
		t.Errorf("null everywhere: untight said %q, want it to fail 6 of 6", msg)
	}
	if msg := untight(runs(true)); msg != "" {
		t.Errorf("bounded claims: untight said %q, want nothing", msg)
	}
	if s := widthSummary(runs(true)); !strings.Contains(s, "a-quiet") {
		t.Errorf("widthSummary lacks a scenario:\n%s", s)
	}
}

// An unbounded claim is counted by why it has no bound: capped, folded
// (a forced fold of podwatch's window), or else said behind.
func TestClaimWidthsTellWhy(t *testing.T) {
	var evs []v1.Event
	for i, c := range []types.Claim{
		{Op: types.OpUpdate, Capped: true},
		{Op: types.OpUpdate, Folded: true, MaySkip: true},
		{Op: types.OpUpdate},
		{Op: types.OpUpdate, Before: types.Bounded(0, 2)},
	} {
		c.ID = uint64(i + 1)
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, v1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Annotations: map[string]string{events.AnnotationClaim: string(raw)}},
			InvolvedObject: v1.ObjectReference{Kind: types.KindPod, Namespace: "default", Name: "web-node"},
			Reason:         types.ReasonUpdated,
			Count:          1,
		})
	}
	w := claimWidths(evs, "default/web-node")
	if w.capped != 1 || w.folded != 1 || w.behind != 1 || len(w.bounded) != 1 || w.bounded[0] != 2 {
		t.Errorf("read as %+v, want one each of capped, folded, behind, and one bounded of width 2", w)
	}
	s := widthSummary([]result{{name: "a", family: "a", agree: true, widths: w}})
	if !strings.Contains(s, "folded") {
		t.Errorf("widthSummary has no folded column:\n%s", s)
	}
}
