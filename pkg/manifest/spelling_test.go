package manifest

import (
	"maps"
	"testing"
)

// Quantities spelt otherwise than canonically keep the file's text, by the
// paths UPDATE messages use; canonical ones, and a number written bare, are
// not repeated.
func TestQuantitySpellings(t *testing.T) {
	p := mustDecode(t, withSpec(`containers:
- name: web
  image: nginx
  resources:
    limits: {cpu: 1000m, memory: 1Gi}
    requests: {cpu: 0.5, memory: 1}
initContainers:
- name: init
  image: busybox
  resources:
    limits: {cpu: 1.5}
    requests: {memory: "1024Mi"}
volumes:
- name: scratch
  emptyDir: {sizeLimit: 0.5Gi}
`))
	want := map[string]string{
		"spec.containers[web].resources.limits[cpu]":           "1000m",
		"spec.containers[web].resources.requests[cpu]":         "0.5",
		"spec.initContainers[init].resources.requests[memory]": "1024Mi",
		"spec.initContainers[init].resources.limits[cpu]":      "1.5",
		"spec.initContainers[init].resources.requests[cpu]":    "1.5", // copied from the limit
		"spec.volumes[scratch].emptyDir.sizeLimit":             "0.5Gi",
	}
	if !maps.Equal(p.Spelt, want) {
		t.Fatalf("Spelt = %v\nwant %v", p.Spelt, want)
	}
	if p := mustDecode(t, withSpec(oneContainer+"  resources: {limits: {cpu: 1, memory: 64Mi}}\n")); p.Spelt != nil {
		t.Fatalf("canonical quantities: Spelt = %v, want nil", p.Spelt)
	}
}
