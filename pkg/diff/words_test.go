package diff

import (
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// A change with a claim keeps its first clause and says its hedge in the
// claim's words, once; one without keeps its message.
func TestHedgedRendersTheClaim(t *testing.T) {
	msg := "web.yaml: image 1 → 2: the kubelet restarts the pod (new UID); on the way the kubelet's watch may have taken in sedQ3xZ9a (gone again at once: whether it read it first is a race), so it may restart the pod once more before this"
	if got := hedged(msg, nil); got != msg {
		t.Errorf("no claim: %q, want the message as it is", got)
	}
	cl := &types.Claim{Op: types.OpUpdate, Before: types.Bounded(0, 1), Via: []string{"sedQ3xZ9a"}}
	if got, want := hedged(msg, cl), "web.yaml: image 1 → 2: the kubelet restarts the pod (new UID); may restart it once more first (sed's temp file)"; got != want {
		t.Errorf("with a claim: %q, want %q", got, want)
	}
	if got, want := hedged(msg, &types.Claim{Op: types.OpUpdate, Before: types.Bounded(0, 0)}), "web.yaml: image 1 → 2: the kubelet restarts the pod (new UID)"; got != want {
		t.Errorf("a claim of the change alone: %q, want %q", got, want)
	}
}

// The first clause shortens what it names: the container only in a pod of
// several, an image's repository once, a value clipped.
func TestGlanceShortensTheField(t *testing.T) {
	image := fieldChange{path: "spec.containers[web].image", old: "registry.k8s.io/web:1.0", new: "registry.k8s.io/web:1.1"}
	if got, want := glance([]fieldChange{image}, 1), "image 1.0 → 1.1"; got != want {
		t.Errorf("one container: %q, want %q", got, want)
	}
	moved := fieldChange{path: "spec.containers[web].image", old: "a.example/web:1", new: "b.example/web:1"}
	if got, want := glance([]fieldChange{moved, image}, 2), "web image a.example/web:1 → b.example/web:1 and 1 more field"; got != want {
		t.Errorf("two containers: %q, want %q", got, want)
	}
	if got := clip("0123456789", 6); got != "012…" {
		t.Errorf("clip = %q, want 012…", got)
	}
}
