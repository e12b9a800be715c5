package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// deployObject is one object of deploy/kubernetes, as kubectl names it.
type deployObject struct {
	kind, namespace, name string
}

// deployObjects reads every object the .yaml files of deploy/kubernetes
// define, so the test below expects what the files say, not a copy.
func deployObjects(t *testing.T) []deployObject {
	t.Helper()
	var objs []deployObject
	for _, f := range deployFiles(t) {
		data, err := os.ReadFile(filepath.Join(deployDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			var o struct {
				metav1.TypeMeta `json:",inline"`
				Metadata        metav1.ObjectMeta `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			objs = append(objs, deployObject{o.Kind, o.Metadata.Namespace, o.Metadata.Name})
		}
	}
	return objs
}

// The Kustomization lists every .yaml of the folder, so -k and -f install
// the same objects.
func TestDeployKustomizationListsEveryFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "Kustomization"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if want := deployFiles(t); !slices.Equal(got, want) {
		t.Errorf("Kustomization resources = %v, want the folder's .yaml files %v", got, want)
	}
}

// What the README tells operators to run, with the real kubectl, on a
// fresh API server: each way must succeed the first time and create every
// object. kubectl applies a folder's files in name order and fails on an
// object whose namespace does not exist yet, so a DaemonSet sorting before
// the Namespace breaks -f; -k must find the Kustomization that -f skips.
func TestKubectlApplyDeploy(t *testing.T) {
	t.Parallel()
	want := deployObjects(t)
	for _, mode := range []string{"-f", "-k"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := apiserver.Start(t)
			ctx := context.Background()
			out, err := s.Kubectl(ctx, apiserver.AdminToken, "apply", mode, deployDir)
			if err != nil {
				t.Fatalf("kubectl apply %s %s on a fresh cluster: %v\n%s", mode, deployDir, err, out)
			}
			for _, o := range want {
				args := []string{"get", o.kind, o.name, "-o", "jsonpath={.metadata.name}"}
				if o.namespace != "" {
					args = append(args, "-n", o.namespace)
				}
				got, err := s.Kubectl(ctx, apiserver.AdminToken, args...)
				if err != nil || got != o.name {
					t.Errorf("after kubectl apply %s: %s %s/%s: got %q, %v", mode, o.kind, o.namespace, o.name, got, err)
				}
			}
			t.Logf("kubectl apply %s:\n%s", mode, out)
		})
	}
}
