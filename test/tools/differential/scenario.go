package differential

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/txtar"
)

// A scenario is a txtar archive in the real-kubelet suite's language
// (kubelet/scenario_test.go), so that one file serves both harnesses: its
// comment holds the steps, one a line ('#' starts a comment), and its files
// are the fixtures the steps write. This harness plays these steps:
//
//	write FIXTURE as NAME   rewrite NAME in place: open(O_TRUNC), one write, close
//	rename OLD NEW          rename(2)
//	remove NAME             unlink(2)
//	settle                  wait until both sides have acted on every step so
//	                        far: ends a phase
//	relist                  wait until both sides have listed the folder in
//	                        full, then settle
//	start                   start both sources (implied before the first step
//	                        when absent); steps before it prepare the folder.
//	                        Only this harness has it: its scenarios live in
//	                        testdata/scenarios
//
// and reads known-disagreement: REASON, which says podwatch is known to
// disagree with the real kubelet (see TestDifferential for what it means
// here).
//
// The other steps and lines of the language are the real kubelet's alone:
// a scenario that has one is not played here (Parse says ErrKubeletOnly). A
// step or line in neither list is an error, so that a new one is added to
// one list or the other, not skipped unread.
//
// Verdicts are compared phase by phase, so a scenario ends with settle or
// relist; the listing at start is phase 0.

// Step is one line of a scenario.
type Step struct {
	Line int
	Op   string
	// Args are the file names first: write's are NAME, FIXTURE.
	Args []string
}

// Scenario is a parsed scenario file.
type Scenario struct {
	Name string
	// KnownDisagreement says why podwatch is expected to disagree with the
	// real kubelet today; empty when it must agree.
	KnownDisagreement string
	// Setup runs before the sources start, Steps after.
	Setup, Steps []Step
	// Fixtures holds the archive's files by name.
	Fixtures map[string][]byte
}

// ErrKubeletOnly is wrapped by Parse's error for a scenario that uses a step
// or line that only the real-kubelet suite plays.
var ErrKubeletOnly = errors.New("only the real-kubelet suite plays it")

// played are the steps this harness plays, with their number of arguments
// (write's includes its "as").
var played = map[string]int{"write": 3, "rename": 2, "remove": 1, "settle": 0, "relist": 0, "start": 0}

// kubeletOnly are the steps and lines of the real-kubelet suite that this
// harness does not play: they need the real tools (sed, cp), a slow writer
// or a wait whose outcome is a race (runs, outcome), or the kubelet's own
// folder and relist phase, or what an in-process file source has no part
// of (symlink, chmod).
var kubeletOnly = map[string]bool{
	"symlink": true, "sed": true, "cp": true, "chunks": true, "chmod": true,
	"move-folder": true, "remove-folder": true, "make-folder": true,
	"phase-known": true, "hold": true, "write-in-relist": true,
	"runs:": true, "outcome:": true, "kubelet:": true,
}

const knownPrefix = "known-disagreement:"

// Load parses the scenario at path.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := Parse(strings.TrimSuffix(filepath.Base(path), ".txtar"), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// Parse parses a scenario's archive.
func Parse(name string, data []byte) (*Scenario, error) {
	a := txtar.Parse(data)
	sc := &Scenario{Name: name, Fixtures: map[string][]byte{}}
	for _, f := range a.Files {
		sc.Fixtures[f.Name] = f.Data
	}
	var other []string // what only the real kubelet plays
	steps := 0
	var parsed []Step
	start := -1 // index of the start step in parsed
	for i, l := range strings.Split(string(a.Comment), "\n") {
		n := i + 1
		fields := strings.Fields(l)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if key, val, ok := strings.Cut(l, ":"); ok && !strings.ContainsAny(key, " \t") {
			switch {
			case key+":" == knownPrefix:
				if val = strings.TrimSpace(val); val == "" || sc.KnownDisagreement != "" {
					return nil, fmt.Errorf("line %d: one %s with a reason per scenario", n, knownPrefix)
				}
				sc.KnownDisagreement = val
			case kubeletOnly[key+":"]:
				other = append(other, key+":")
			default:
				return nil, fmt.Errorf("line %d: unknown line %q: add it to played or kubeletOnly", n, l)
			}
			continue
		}
		st := Step{Line: n, Op: fields[0], Args: fields[1:]}
		if kubeletOnly[st.Op] {
			other = append(other, st.Op)
			continue
		}
		want, ok := played[st.Op]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown step %q: add it to played or kubeletOnly", n, l)
		}
		if len(st.Args) != want || (st.Op == "write" && st.Args[1] != "as") {
			return nil, fmt.Errorf("line %d: bad step %q", n, l)
		}
		if st.Op == "write" {
			st.Args = []string{st.Args[2], st.Args[0]}
			if _, ok := sc.Fixtures[st.Args[1]]; !ok {
				return nil, fmt.Errorf("line %d: no fixture %q in the archive", n, st.Args[1])
			}
		}
		if err := checkNames(st); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		steps++
		if st.Op == "start" {
			if start >= 0 {
				return nil, fmt.Errorf("line %d: start twice", n)
			}
			start = len(parsed)
			continue
		}
		parsed = append(parsed, st)
	}
	if len(other) > 0 {
		slices.Sort(other)
		return nil, fmt.Errorf("%w: %s", ErrKubeletOnly, strings.Join(slices.Compact(other), ", "))
	}
	// Without start, everything happens to a watched, empty folder.
	sc.Setup, sc.Steps = parsed[:max(start, 0)], parsed[max(start, 0):]
	for _, st := range sc.Setup {
		if st.Op == "settle" || st.Op == "relist" {
			// Markers in a folder nobody watches yet would prove nothing.
			return nil, fmt.Errorf("line %d: %s before start", st.Line, st.Op)
		}
	}
	if steps == 0 {
		return nil, errors.New("no steps")
	}
	if k := len(sc.Steps); k > 0 && sc.Steps[k-1].Op != "settle" && sc.Steps[k-1].Op != "relist" {
		return nil, fmt.Errorf("line %d: the last step must be settle or relist, or the steps after it go unjudged", sc.Steps[k-1].Line)
	}
	return sc, nil
}

// checkNames keeps steps to file names in the folder that sort after the
// harness's own marker files, which a relist must read first. Dot files,
// which both sides ignore, are fine: editors save through them.
func checkNames(st Step) error {
	var names []string
	switch st.Op {
	case "write", "remove":
		names = st.Args[:1]
	case "rename":
		names = st.Args
	}
	for _, n := range names {
		if n != filepath.Base(n) || n == "." || n == ".." || (!strings.HasPrefix(n, ".") && (n <= markerFilePrefix || strings.HasPrefix(n, markerFilePrefix))) {
			return fmt.Errorf("%q: want a file name in the folder that sorts after %s*", n, markerFilePrefix)
		}
	}
	return nil
}
