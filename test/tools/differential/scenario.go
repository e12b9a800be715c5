package differential

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A scenario file (testdata/scenarios/NAME.txt) holds one step per line;
// blank lines and lines starting with '#' are comments.
//
//	known-disagreement: REASON  podwatch is known to disagree today; report, don't fail
//	install NAME FIXTURE        write FIXTURE to a dot file, rename(2) it onto NAME
//	write NAME FIXTURE          rewrite NAME in place: open(O_TRUNC), one write, close
//	rename OLD NEW              rename(2)
//	remove NAME                 unlink(2)
//	start                       start both sources (implied before the first step
//	                            when absent); steps before it prepare the folder
//	settle                      wait until both sides have acted on every step so
//	                            far: ends a phase
//	relist                      wait until both sides have listed the folder in
//	                            full, then settle
//
// FIXTURE names testdata/fixtures/FIXTURE.yaml. Verdicts are compared phase
// by phase, so a scenario ends with settle or relist; the listing at start
// is phase 0.

// Step is one line of a scenario.
type Step struct {
	Line int
	Op   string
	Args []string
}

// Scenario is a parsed scenario file.
type Scenario struct {
	Name string
	// KnownDisagreement says why podwatch is expected to disagree with the
	// kubelet today; empty when it must agree.
	KnownDisagreement string
	// Setup runs before the sources start, Steps after.
	Setup, Steps []Step
	// Fixtures holds the content of every fixture the steps name.
	Fixtures map[string][]byte
}

// stepArity is the number of arguments op takes; false for no such step.
func stepArity(op string) (int, bool) {
	switch op {
	case "install", "write", "rename":
		return 2, true
	case "remove":
		return 1, true
	case "start", "settle", "relist":
		return 0, true
	}
	return 0, false
}

const knownPrefix = "known-disagreement:"

// Load parses the scenario at path, reading its fixtures from fixtureDir.
func Load(path, fixtureDir string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := Parse(strings.TrimSuffix(filepath.Base(path), ".txt"), data, func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(fixtureDir, name+".yaml"))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// Parse parses a scenario's text; fixture reads a fixture by name.
func Parse(name string, data []byte, fixture func(string) ([]byte, error)) (*Scenario, error) {
	sc := &Scenario{Name: name, Fixtures: map[string][]byte{}}
	var steps []Step
	start := -1 // index of the start step in steps
	lines := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; lines.Scan(); n++ {
		line := strings.TrimSpace(lines.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if reason, ok := strings.CutPrefix(line, knownPrefix); ok {
			reason = strings.TrimSpace(reason)
			if reason == "" || sc.KnownDisagreement != "" {
				return nil, fmt.Errorf("line %d: one %s with a reason per scenario", n, knownPrefix)
			}
			sc.KnownDisagreement = reason
			continue
		}
		fields := strings.Fields(line)
		st := Step{Line: n, Op: fields[0], Args: fields[1:]}
		if want, ok := stepArity(st.Op); !ok || len(st.Args) != want {
			return nil, fmt.Errorf("line %d: bad step %q", n, line)
		}
		if err := checkNames(st); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if st.Op == "install" || st.Op == "write" {
			if err := sc.loadFixture(st.Args[1], fixture); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
		}
		if st.Op == "start" {
			if start >= 0 {
				return nil, fmt.Errorf("line %d: start twice", n)
			}
			start = len(steps)
			continue
		}
		steps = append(steps, st)
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	// Without start, everything happens to a watched, empty folder.
	sc.Setup, sc.Steps = steps[:max(start, 0)], steps[max(start, 0):]
	for _, st := range sc.Setup {
		if st.Op == "settle" || st.Op == "relist" {
			// Markers in a folder nobody watches yet would prove nothing.
			return nil, fmt.Errorf("line %d: %s before start", st.Line, st.Op)
		}
	}
	if len(sc.Setup)+len(sc.Steps) == 0 {
		return nil, errors.New("no steps")
	}
	if k := len(sc.Steps); k > 0 && sc.Steps[k-1].Op != "settle" && sc.Steps[k-1].Op != "relist" {
		return nil, fmt.Errorf("line %d: the last step must be settle or relist, or the steps after it go unjudged", sc.Steps[k-1].Line)
	}
	return sc, nil
}

func (sc *Scenario) loadFixture(name string, fixture func(string) ([]byte, error)) error {
	if _, ok := sc.Fixtures[name]; ok {
		return nil
	}
	if name != filepath.Base(name) {
		return fmt.Errorf("fixture %q is not a plain name", name)
	}
	data, err := fixture(name)
	if err != nil {
		return fmt.Errorf("fixture %s: %w", name, err)
	}
	sc.Fixtures[name] = data
	return nil
}

// checkNames keeps steps to plain file names in the folder, off the dot
// files (the kubelet ignores them, and install uses them) and off the
// harness's own marker files.
func checkNames(st Step) error {
	var names []string
	switch st.Op {
	case "install", "write", "remove":
		names = st.Args[:1]
	case "rename":
		names = st.Args
	}
	for _, n := range names {
		if n != filepath.Base(n) || strings.HasPrefix(n, ".") || strings.HasPrefix(n, markerFilePrefix) {
			return fmt.Errorf("%q: want a plain file name, not a dot file or %s*", n, markerFilePrefix)
		}
	}
	return nil
}
