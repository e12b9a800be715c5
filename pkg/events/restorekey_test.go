package events

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// A restored Event carries its key: an occurrence of that key continues it
// however it is worded now.
func TestRestoredKeyContinuesTheEvent(t *testing.T) {
	o := update("a>b", "x.yaml: image a -> b; may have taken in sedAAAAAA")
	prev := stored(o, "web-node-1.1", 3, t0.Add(-5*time.Minute), t0.Add(-time.Minute))
	prev.Annotations = map[string]string{AnnotationKey: "a>b"}
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, []v1.Event{prev})
	o.Message = "x.yaml: image a -> b; may have taken in sedBBBBBB"
	mustRecord(t, r, o)
	w := out.got()[0]
	if w.ev.Name != prev.Name || w.ev.Count != 4 || w.ev.Message != o.Message || w.ev.Annotations[AnnotationKey] != "a>b" {
		t.Fatalf("%s x%d %q %v, want %s x4 with the new message and its key", w.ev.Name, w.ev.Count, w.ev.Message, w.ev.Annotations, prev.Name)
	}
}
