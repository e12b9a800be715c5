package events

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// An Event written by the release before, keyed by its message and with no
// key annotation, is continued rather than split: matched by reason,
// object and file, the exact message first, and given its key from then on.
func TestUnannotatedEventIsContinued(t *testing.T) {
	upd := update("", "x.yaml: image a -> b")
	flip := update("", "x.yaml: image b -> a")
	otherFile := update("", "y.yaml: image a -> b")
	inv := occ("InvalidManifest", "a.yaml: line 3: oops")
	inv.File = "a.yaml"
	prev := []v1.Event{
		stored(upd, "web-node-1.1", 5, t0.Add(-9*time.Minute), t0.Add(-3*time.Minute)),
		stored(flip, "web-node-1.2", 4, t0.Add(-8*time.Minute), t0.Add(-2*time.Minute)),
		stored(otherFile, "web-node-1.3", 1, t0.Add(-7*time.Minute), t0.Add(-time.Minute)),
		stored(inv, "node-1.4", 7, t0.Add(-30*time.Minute), t0.Add(-time.Minute)),
	}
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, prev)

	check := func(o Occurrence, name string, count int32) {
		t.Helper()
		mustRecord(t, r, o)
		ws := out.got()
		w := ws[len(ws)-1]
		if w.ev.Name != name || w.ev.Count != count || w.ev.Message != o.Message || w.ev.Annotations[AnnotationKey] != o.Key {
			t.Fatalf("%q: %s x%d %v, want %s x%d with key %q", o.Message, w.ev.Name, w.ev.Count, w.ev.Annotations, name, count, o.Key)
		}
	}
	// The message of the flip back matches exactly: that Event, not the
	// newest of the file.
	o := flip
	o.Key = "b>a"
	check(o, "web-node-1.2", 5)
	// Reworded: the remaining Event of the same file continues.
	o = upd
	o.Key, o.Message = "a>b", "x.yaml: image a -> b; may have taken in sedQ1x9Zz"
	check(o, "web-node-1.1", 6)
	// And keeps counting by its key now.
	o.Message = "x.yaml: image a -> b"
	check(o, "web-node-1.1", 7)
	// An invalid file whose error changed is the same Event.
	inv.Key, inv.Message = "invalid/a.yaml", "a.yaml: line 9: another typo"
	check(inv, "node-1.4", 8)
	// A third transition of x.yaml has nothing left to continue: a new
	// Event, while y.yaml's stays for y.yaml.
	o = update("c>d", "x.yaml: image c -> d")
	mustRecord(t, r, o)
	ws := out.got()
	if w := ws[len(ws)-1]; w.ev.Count != 1 || w.ev.Name == "web-node-1.3" {
		t.Fatalf("a new transition took %s x%d", w.ev.Name, w.ev.Count)
	}
}
