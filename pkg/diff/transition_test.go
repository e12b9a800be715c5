package diff

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/manifest"
	"github.com/podwatch/podwatch/pkg/types"
)

// An edit flipped back and forth gives two keys, one per direction, and a
// flip repeated gives its key again: the key is the transition, not the
// words.
func TestUpdateKeyIsTheTransition(t *testing.T) {
	a, b := pod("web", "nginx:1.28"), pod("web", "nginx:1.29")
	st := publishedState(t, snap(true, valid("x.yaml", a, t0)))
	var keys []string
	at := t0
	for _, p := range []*types.Pod{b, a, b} {
		at = at.Add(time.Minute)
		var chs []types.Change
		chs, st, _ = Compute(st, snap(false, valid("x.yaml", p, at)), at, testOpts)
		c := mustOne(t, chs, types.ReasonUpdated)
		if c.Key == "" {
			t.Fatalf("UPDATE %q has no key", c.Message)
		}
		keys = append(keys, c.Key)
	}
	if keys[0] != keys[2] || keys[0] == keys[1] {
		t.Fatalf("keys of a->b, b->a, a->b are %v: want the first and last equal, the middle different", keys)
	}
	other := publishedState(t, snap(true, valid("y.yaml", a, t0)))
	chs, _, _ := Compute(other, snap(false, valid("y.yaml", b, t0.Add(time.Minute))), t0.Add(time.Minute), testOpts)
	if c := mustOne(t, chs, types.ReasonUpdated); c.Key == keys[0] {
		t.Fatal("the same edit of another file has the same key")
	}
}

// A file's invalid content is one problem whatever the error says: a typo
// fixed into another keeps the key, while another file, or a file too
// large for the kubelet, is another.
func TestInvalidKeyIgnoresTheErrorText(t *testing.T) {
	invalid := func(name string, err error, at time.Time) string {
		t.Helper()
		s := snap(true, types.File{Name: name, Err: err, ChangedAt: at})
		chs, _, _ := Compute(State{}, s, at.Add(time.Minute), testOpts)
		c := mustOne(t, chs, types.ReasonInvalid)
		if c.Key == "" {
			t.Fatalf("%q has no key", c.Message)
		}
		return c.Key
	}
	typo := &manifest.Error{Line: 3, Msg: "yaml: could not find expected ':'"}
	other := &manifest.Error{Line: 7, Msg: "spec.containers[0].image: Required value"}
	k := invalid("a.yaml", typo, t0)
	if got := invalid("a.yaml", other, t0.Add(30*time.Second)); got != k {
		t.Fatal("another error in the same file changed the key")
	}
	if invalid("b.yaml", typo, t0) == k {
		t.Fatal("the same error in another file has the same key")
	}
	if invalid("a.yaml", &manifest.Error{Msg: manifest.ErrTooLarge.Error(), Err: manifest.ErrTooLarge}, t0) == k {
		t.Fatal("a file too large has the key of a typo")
	}
}
