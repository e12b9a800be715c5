package diff

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

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

// The walk skips a field whose two sides are plainly equal before it
// names it; every kind it skips so must still show when it differs, and
// nil against empty must stay no change.
func TestPodFieldChangesKindsItSkips(t *testing.T) {
	base := func() *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "web", Image: "nginx"}}}}
	}
	grace, two := int64(30), int64(2)
	cases := []struct {
		name string
		edit func(p *v1.Pod)
		want string
	}{
		{"nothing", func(*v1.Pod) {}, ""},
		{"empty for nil", func(p *v1.Pod) { p.Spec.Volumes, p.Labels = []v1.Volume{}, map[string]string{} }, ""},
		{"string", func(p *v1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }, "spec.containers[web].image: nginx -> nginx:2"},
		{"bool", func(p *v1.Pod) { p.Spec.HostNetwork = true }, "spec.hostNetwork: false -> true"},
		{"int behind a pointer", func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = &grace }, "spec.terminationGracePeriodSeconds: added"},
		{"map item", func(p *v1.Pod) { p.Labels = map[string]string{"tier": "web"} }, "metadata.labels[tier]: added"},
		{"list item", func(p *v1.Pod) { p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "side"}) }, "spec.containers[side]: added"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := base()
			tc.edit(cur)
			got := summarize(podFieldChanges(base(), cur, nil, nil), 0)
			if got != tc.want {
				t.Fatalf("changes %q, want %q", got, tc.want)
			}
		})
	}
	old, cur := base(), base()
	old.Spec.TerminationGracePeriodSeconds, cur.Spec.TerminationGracePeriodSeconds = &grace, &two
	if got := summarize(podFieldChanges(old, cur, nil, nil), 0); got != "spec.terminationGracePeriodSeconds: 30 -> 2" {
		t.Fatalf("a pointed-to int changed: %q", got)
	}
}
