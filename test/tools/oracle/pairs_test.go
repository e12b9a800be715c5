package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// pairsDir holds edit pairs: NAME.a.yaml and NAME.b.yaml are two versions
// of one manifest at one path. pkg/manifest's own test reads the same
// expectations without importing kubernetes.
var pairsDir = filepath.Join("..", "..", "..", "pkg", "manifest", "testdata", "pairs")

// pairPath is where both versions of a pair are said to live: the kubelet's
// UID hashes the path, which is the same for both.
const pairPath = "/etc/kubernetes/manifests/web.yaml"

// pairExpectations is the layout of pairs/expected.json. Restart is the
// kubelet's: -update rewrites it from the UIDs; About is set by hand.
type pairExpectations struct {
	Node  string      `json:"node"`
	Path  string      `json:"path"`
	Pairs []*pairSpec `json:"pairs"`
}

type pairSpec struct {
	Name    string `json:"name"`
	About   string `json:"about"`
	Restart bool   `json:"restart"`
}

func loadPairs(t testing.TB) *pairExpectations {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(pairsDir, expectedFile))
	if err != nil {
		t.Fatal(err)
	}
	var e pairExpectations
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("pairs/%s: %v", expectedFile, err)
	}
	return &e
}

func (e *pairExpectations) save() error {
	sort.Slice(e.Pairs, func(i, j int) bool { return e.Pairs[i].Name < e.Pairs[j].Name })
	return saveJSON(filepath.Join(pairsDir, expectedFile), e)
}

// pairNames lists the pairs on disk.
func pairNames(t testing.TB) []string {
	t.Helper()
	as, err := filepath.Glob(filepath.Join(pairsDir, "*.a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range as {
		names = append(names, strings.TrimSuffix(filepath.Base(a), ".a.yaml"))
	}
	sort.Strings(names)
	return names
}

func readPair(t testing.TB, name string) (a, b []byte) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join(pairsDir, name+".a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(pairsDir, name+".b.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// kubeletRestarts says whether the kubelet gives the two versions different
// UIDs, that is stops the pod and starts it anew.
func kubeletRestarts(a, b []byte, node string) (bool, error) {
	va := DecodeAt("web.yaml", pairPath, a, node)
	vb := DecodeAt("web.yaml", pairPath, b, node)
	if !va.Valid || !vb.Valid {
		return false, fmt.Errorf("both versions must be valid: a %q, b %q", va.Message, vb.Message)
	}
	if va.Key != vb.Key {
		return false, fmt.Errorf("the versions are different pods: %s, %s", va.Key, vb.Key)
	}
	return va.Pod.UID != vb.Pod.UID, nil
}

// podwatchRestarts says whether podwatch reports the edit as a restart.
func podwatchRestarts(a, b []byte, node string) (bool, error) {
	pa, err := manifest.Decode(a, manifest.Options{NodeName: node})
	if err != nil {
		return false, err
	}
	pb, err := manifest.Decode(b, manifest.Options{NodeName: node})
	if err != nil {
		return false, err
	}
	// As pkg/diff decides: a manifest that sets metadata.uid keeps that UID
	// (the kubelet updates such a pod in place); otherwise Config decides.
	if pa.UID != "" || pb.UID != "" {
		return pa.UID != pb.UID, nil
	}
	return pa.Config != pb.Config, nil
}

// TestEditPairs judges each pair by the kubelet's UIDs, checks
// expected.json (or rewrites it with -update), and requires podwatch's
// same-pod / restart verdict to be the kubelet's.
func TestEditPairs(t *testing.T) {
	e := loadPairs(t)
	if e.Path != pairPath {
		t.Fatalf("pairs/%s: path %q, want %q", expectedFile, e.Path, pairPath)
	}
	byName := map[string]*pairSpec{}
	for _, p := range e.Pairs {
		byName[p.Name] = p
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-45s %-10s %-10s\n", "pair", "kubelet", "podwatch")
	verdict := map[bool]string{false: "same pod", true: "restart"}
	for _, name := range pairNames(t) {
		a, b := readPair(t, name)
		kube, err := kubeletRestarts(a, b, e.Node)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pw, err := podwatchRestarts(a, b, e.Node)
		if err != nil {
			t.Errorf("%s: podwatch: %v", name, err)
			continue
		}
		fmt.Fprintf(&table, "%-45s %-10s %-10s\n", name, verdict[kube], verdict[pw])
		spec := byName[name]
		switch {
		case spec == nil && *update:
			spec = &pairSpec{Name: name, About: "TODO"}
			e.Pairs = append(e.Pairs, spec)
			byName[name] = spec
		case spec == nil:
			t.Errorf("%s: not in pairs/%s (run with -update, then write its about)", name, expectedFile)
			continue
		}
		if *update {
			spec.Restart = kube
		} else if spec.Restart != kube {
			t.Errorf("%s: expected.json says restart=%v, the kubelet's UIDs say %v", name, spec.Restart, kube)
		}
		if pw != kube {
			t.Errorf("%s: podwatch says %s, the kubelet %s", name, verdict[pw], verdict[kube])
		}
	}
	t.Logf("edit pairs, judged by the kubelet's UIDs:\n%s", table.String())
	if *update {
		if err := e.save(); err != nil {
			t.Fatal(err)
		}
	}
}
