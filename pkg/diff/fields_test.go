package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/manifest"
	"github.com/podwatch/podwatch/pkg/types"
)

// A quantity changed is shown as each file wrote it: the kubelet's config
// hash sees the spelling, so "900m -> 1" for a file that says 1000m would
// send the reader looking for text that is not there. The published state
// keeps the old spelling, also through a restart (the state round-trips
// through JSON). A request the kubelet copies from the limit takes the
// limit's spelling.
func TestUpdateShowsQuantityAsSpelt(t *testing.T) {
	decode := func(cpu string) *types.Pod {
		t.Helper()
		p, err := manifest.Decode([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: nginx\n    resources: {limits: {cpu: "+cpu+", memory: 1024Mi}}\n"), manifest.Options{NodeName: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	st := publishedState(t, snap(true, valid("web.yaml", decode("900m"), t0)))
	st = roundTrip(t, st)
	chs, st, _ := Compute(st, snap(false, valid("web.yaml", decode("1000m"), t0)), t0.Add(time.Minute), testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if want := "web.yaml: spec.containers[web].resources.limits[cpu]: 900m -> 1000m; spec.containers[web].resources.requests[cpu]: 900m -> 1000m; the kubelet"; !strings.HasPrefix(c.Detail, want) {
		t.Fatalf("detail %q, want it to start with %q", c.Detail, want)
	}
	if want := "web.yaml: resources.limits[cpu] 900m → 1000m and 1 more field: the kubelet"; !strings.HasPrefix(c.Message, want) {
		t.Fatalf("message %q, want it to start with %q", c.Message, want)
	}
	chs, _, _ = Compute(roundTrip(t, st), snap(false, valid("web.yaml", decode("2"), t0)), t0.Add(2*time.Minute), testOpts)
	c = mustOne(t, chs, types.ReasonUpdated)
	if want := "web.yaml: spec.containers[web].resources.limits[cpu]: 1000m -> 2; spec.containers[web].resources.requests[cpu]: 1000m -> 2; the kubelet"; !strings.HasPrefix(c.Detail, want) {
		t.Fatalf("detail %q, want it to start with %q", c.Detail, want)
	}
}

// A quantity only spelt another way changes no field, but the kubelet's
// config hash sees it: the UPDATE names the quantity and both spellings,
// the canonical one too when one file wrote it so.
func TestUpdateNamesARespeltQuantity(t *testing.T) {
	decode := func(cpu string) *types.Pod {
		t.Helper()
		p, err := manifest.Decode([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: nginx\n    resources: {requests: {cpu: "+cpu+"}}\n"), manifest.Options{NodeName: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	st := roundTrip(t, publishedState(t, snap(true, valid("web.yaml", decode(`"1"`), t0))))
	chs, st, _ := Compute(st, snap(false, valid("web.yaml", decode("1000m"), t0)), t0.Add(time.Minute), testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if want := "web.yaml: spec.containers[web].resources.requests[cpu]: 1 -> 1000m (the same quantity spelt another way, which the kubelet's config hash sees); the kubelet gives the pod a new UID"; !strings.HasPrefix(c.Detail, want) {
		t.Fatalf("detail %q, want it to start with %q", c.Detail, want)
	}
	chs, _, _ = Compute(roundTrip(t, st), snap(false, valid("web.yaml", decode(`"1.0"`), t0)), t0.Add(2*time.Minute), testOpts)
	c = mustOne(t, chs, types.ReasonUpdated)
	if want := "web.yaml: resources.requests[cpu] respelt 1000m → 1.0: the kubelet restarts the pod (new UID)"; !strings.HasPrefix(c.Message, want) {
		t.Fatalf("message %q, want it to start with %q", c.Message, want)
	}
}
