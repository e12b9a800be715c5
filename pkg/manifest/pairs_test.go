package manifest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// Edit pairs: two versions of one manifest at one path, and whether the
// kubelet restarts the pod between them. The verdicts come from the
// kubelet's own UIDs (test/tools/oracle TestEditPairs, -update); this test
// holds podwatch's Config to them without importing kubernetes.
const pairsDir = "testdata/pairs"

type pairExpectations struct {
	Node  string `json:"node"`
	Path  string `json:"path"`
	Pairs []struct {
		Name    string `json:"name"`
		About   string `json:"about"`
		Restart bool   `json:"restart"`
	} `json:"pairs"`
}

func TestEditPairsRestartAsTheKubelet(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pairsDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e pairExpectations
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatal(err)
	}
	as, err := filepath.Glob(filepath.Join(pairsDir, "*.a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Pairs) != len(as) || len(as) == 0 {
		t.Fatalf("%d pairs on disk, %d in expected.json", len(as), len(e.Pairs))
	}
	restarts := 0
	for _, p := range e.Pairs {
		if p.About == "" {
			t.Errorf("%s: no about", p.Name)
		}
		var cfg [2]string
		for i, v := range []string{".a.yaml", ".b.yaml"} {
			data, err := os.ReadFile(filepath.Join(pairsDir, p.Name+v))
			if err != nil {
				t.Fatal(err)
			}
			pod, err := manifest.Decode(data, manifest.Options{NodeName: e.Node})
			if err != nil {
				t.Fatalf("%s%s: %v", p.Name, v, err)
			}
			cfg[i] = pod.Config
		}
		if got := cfg[0] != cfg[1]; got != p.Restart {
			t.Errorf("%s (%s): podwatch says restart=%v, the kubelet %v", p.Name, p.About, got, p.Restart)
		}
		if p.Restart {
			restarts++
		}
	}
	if restarts == 0 || restarts == len(e.Pairs) {
		t.Fatalf("%d of %d pairs restart: the set no longer tells the two apart", restarts, len(e.Pairs))
	}
}
