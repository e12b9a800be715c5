package monitoring

import (
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict reads a one-object YAML file into obj, refusing unknown
// fields, so a misspelt field fails here rather than being ignored.
func decodeStrict(t *testing.T, path string, obj any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// daemonSet is deploy/kubernetes' DaemonSet and its agent container.
func daemonSet(t *testing.T) (*appsv1.DaemonSet, *corev1.Container) {
	t.Helper()
	var ds appsv1.DaemonSet
	decodeStrict(t, filepath.Join(deployDir, "kubernetes", "20-daemonset.yaml"), &ds)
	for i, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == "podwatch" {
			return &ds, &ds.Spec.Template.Spec.Containers[i]
		}
	}
	t.Fatal("the DaemonSet has no podwatch container")
	return nil, nil
}
