package events

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// An Event carries its latest occurrence's detail, as the message is its
// latest occurrence's: an occurrence with none drops the one before, and a
// restored Event keeps it until the next occurrence.
func TestDetailFollowsTheLatestOccurrence(t *testing.T) {
	o := update("a>b", "x.yaml: image a → b: the kubelet restarts the pod")
	o.Detail = "on the way the kubelet's watch may have taken in sedAAAAAA"
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	mustRecord(t, r, o)
	if w := out.got()[0]; w.ev.Annotations[AnnotationDetail] != o.Detail {
		t.Fatalf("annotations %v, want %s = %q", w.ev.Annotations, AnnotationDetail, o.Detail)
	}
	o.Detail = ""
	mustRecord(t, r, o)
	if w := out.got()[1]; w.ev.Count != 2 || w.ev.Annotations[AnnotationDetail] != "" {
		t.Fatalf("x%d annotations %v, want x2 with no detail", w.ev.Count, w.ev.Annotations)
	}

	prev := stored(o, "web-node-1.1", 3, t0.Add(-5*time.Minute), t0.Add(-time.Minute))
	prev.Annotations = map[string]string{AnnotationKey: "a>b", AnnotationDetail: "kept"}
	out = &fakeSink{}
	r, _ = newTest(t, Options{}, []Registration{StreamTo("out", out)}, []v1.Event{prev})
	o2 := occ("InvalidManifest", "y.yaml is invalid")
	mustRecord(t, r, o2)
	found := false
	for _, w := range out.got() {
		if w.ev.Name == prev.Name {
			found = true
		}
	}
	if found {
		t.Fatal("an unrelated occurrence wrote the restored Event")
	}
	o.Detail = "new"
	mustRecord(t, r, o)
	w, ok := out.last(prev.Name)
	if !ok || w.ev.Count != 4 || w.ev.Annotations[AnnotationDetail] != "new" {
		t.Fatalf("restored Event written as %+v, want x4 with the new detail", w.ev)
	}
}
