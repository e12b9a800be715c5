//go:build linux

package kubelet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"sigs.k8s.io/yaml"
)

// A scenario is one file in testdata/scenarios: a txtar archive whose
// comment holds the steps, one a line ('#' starts a comment), and whose
// files are the manifests the steps write:
//
//	write FIXTURE as NAME   write the fixture's bytes to NAME in place
//	rename OLD NEW          rename OLD to NEW within the folder
//	remove NAME             delete NAME
//	settle                  wait until the kubelet and podwatch have acted
//
// All scenarios share one kubelet and one folder, so each names its own
// files and pods.
type scenario struct {
	name     string
	steps    []step
	fixtures map[string][]byte
	pods     []string // namespace/name of each fixture's pod, before the node suffix
}

type step struct {
	line int
	verb string
	args []string
}

func loadScenarios(t *testing.T) []scenario {
	t.Helper()
	files, err := filepath.Glob("testdata/scenarios/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/scenarios: %v", err)
	}
	var out []scenario
	owner := map[string]string{} // file or pod name -> scenario, to keep them apart
	for _, f := range files {
		sc, err := parseScenario(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range append(sc.fileNames(), sc.pods...) {
			if o, ok := owner[n]; ok {
				t.Fatalf("%s and %s both use %q; scenarios share one folder and kubelet", o, sc.name, n)
			}
			owner[n] = sc.name
		}
		out = append(out, sc)
	}
	return out
}

func parseScenario(file string) (scenario, error) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		return scenario{}, err
	}
	sc := scenario{name: strings.TrimSuffix(filepath.Base(file), ".txtar"), fixtures: map[string][]byte{}}
	for _, f := range a.Files {
		sc.fixtures[f.Name] = f.Data
		var m struct {
			Metadata struct{ Name, Namespace string }
			Spec     struct {
				Volumes []struct{ HostPath any }
			}
		}
		if err := yaml.Unmarshal(f.Data, &m); err != nil {
			// An invalid manifest is a fine fixture; it names no pod.
			continue
		}
		for _, v := range m.Spec.Volumes {
			if v.HostPath != nil {
				return scenario{}, fmt.Errorf("%s: %s: hostPath volumes would be created on the host; the harness has no tmpfs for them yet", file, f.Name)
			}
		}
		if m.Metadata.Name != "" {
			ns := m.Metadata.Namespace
			if ns == "" {
				ns = "default"
			}
			if p := ns + "/" + m.Metadata.Name; !slices.Contains(sc.pods, p) {
				sc.pods = append(sc.pods, p)
			}
		}
	}
	want := map[string]int{"write": 3, "rename": 2, "remove": 1, "settle": 0}
	for i, l := range strings.Split(string(a.Comment), "\n") {
		fields := strings.Fields(l)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		s := step{line: i + 1, verb: fields[0], args: fields[1:]}
		n, ok := want[s.verb]
		if !ok || len(s.args) != n || (s.verb == "write" && s.args[1] != "as") {
			return scenario{}, fmt.Errorf("%s:%d: cannot read step %q", file, s.line, l)
		}
		if s.verb == "write" {
			if _, ok := sc.fixtures[s.args[0]]; !ok {
				return scenario{}, fmt.Errorf("%s:%d: no fixture %q", file, s.line, s.args[0])
			}
		}
		sc.steps = append(sc.steps, s)
	}
	if len(sc.steps) == 0 || sc.steps[len(sc.steps)-1].verb != "settle" {
		return scenario{}, fmt.Errorf("%s: the last step must be settle", file)
	}
	return sc, nil
}

// fileNames are the names the scenario's steps create in the folder.
func (sc scenario) fileNames() []string {
	var out []string
	for _, s := range sc.steps {
		switch s.verb {
		case "write":
			out = append(out, s.args[2])
		case "rename":
			out = append(out, s.args[1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// apply does a step other than settle in dir.
func (s step) apply(dir string, sc scenario) error {
	switch s.verb {
	case "write":
		return os.WriteFile(filepath.Join(dir, s.args[2]), sc.fixtures[s.args[0]], 0o644)
	case "rename":
		return os.Rename(filepath.Join(dir, s.args[0]), filepath.Join(dir, s.args[1]))
	case "remove":
		return os.Remove(filepath.Join(dir, s.args[0]))
	}
	return fmt.Errorf("step %q is not applied to the folder", s.verb)
}

// The scenarios are read without a kubelet too, so a malformed one fails
// where the kubelet cannot run (-short, no root).
func TestScenariosParse(t *testing.T) {
	for _, sc := range loadScenarios(t) {
		if len(sc.pods) == 0 {
			t.Errorf("%s: no fixture names a pod", sc.name)
		}
	}
}
