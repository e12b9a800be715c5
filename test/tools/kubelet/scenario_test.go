//go:build linux

package kubelet_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
	"sigs.k8s.io/yaml"

	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// A scenario is one file in testdata/scenarios or ../scenarios/shared
// (those the in-process harness plays too): a txtar archive whose
// comment holds the steps, one a line ('#' starts a comment), and whose
// files are the manifests the steps write:
//
//	write FIXTURE as NAME   write the fixture's bytes to NAME in place
//	rename OLD NEW          rename OLD to NEW within the folder
//	remove NAME             delete NAME
//	symlink TARGET NAME     make NAME a symlink to TARGET, which need not
//	                        exist (emacs's lock .#NAME)
//	chmod MODE NAME         change NAME's mode to MODE (octal): its
//	                        content stays, a watch event all the same
//	sed EXPR NAME           run the real sed -i EXPR on NAME (no spaces in EXPR)
//	cp FIXTURE as NAME      run the real cp(1) of the fixture, kept outside
//	                        the folder, onto NAME: over an existing file
//	                        it truncates NAME, then writes it
//	cp OLD NEW              run the real cp(1) of OLD onto NEW in the folder
//	chunks FIXTURE as NAME PAUSE CUT...
//	                        write the fixture to NAME through one open file
//	                        (truncated at open), in chunks that end after
//	                        each CUT (the next occurrence of that text),
//	                        PAUSE between them: a slow writer, whose half
//	                        the kubelet may read
//	move-folder away|back   rename the folder to a sibling and back
//	remove-folder           delete the folder and everything in it
//	make-folder             create the folder again, empty
//	settle                  wait until the kubelet and podwatch have acted
//	relist                  wait until the kubelet has begun a full list of
//	                        the folder since it took in every change before
//	                        this step (see probeWatch)
//	phase-known             wait until podwatch has learnt the kubelet's
//	                        relist phase (its log says so)
//	hold DURATION           leave the folder as it is for DURATION: part of
//	                        what the scenario does to the folder (a file
//	                        invalid for that long), never a wait for a side
//
// and these lines about the scenario as a whole:
//
//	known-disagreement: REASON  podwatch is known to disagree: reported,
//	                            not failed; fails once every run agrees
//	runs: N                     the outcome depends on a race: run it N
//	                            times, each on names of its own
//	outcome: WHAT               with runs, one outcome the race may give,
//	                            as the kubelet's column of the table reads;
//	                            a run whose kubelet did anything else fails
//	kubelet: own                run on a kubelet and folder of its own, for
//	                            a scenario about what else is in the folder
//	kubelet: own, trailing slash  the same, the folder's path given to both
//	                            with a trailing slash
//
// Once the folder is moved away or deleted the kubelet's watch is gone for
// good: it takes in the folder at its relists only, and a settle after it
// waits on a relist (see settle). Such a scenario needs a kubelet of its
// own, and settles only while the folder is there.
//
// JUDGE_RUNS=N runs every racy scenario N times instead of its runs line:
// for a long local run of the races (20 or more). The runs lines hold what
// CI runs: every run adds a pod or two to the one kubelet, and a kubelet
// with a few hundred on a loaded machine restarts pods slower than a
// settle waits.
//
// All other scenarios share one kubelet and one folder, so each names its
// own files and pods; a scenario run N times must have its name in every
// file and pod name, which run i > 1 suffixes with -i.
type scenario struct {
	name     string
	steps    []step
	fixtures map[string][]byte
	pods     []string // namespace/name of each fixture's pod, before the node suffix

	disagreement string   // known-disagreement's reason
	runs         int      // how many times it runs; 1 unless racy
	outcomes     []string // the kubelet outcomes a racy one may give
	ownKubelet   bool
	// quiet runs it on the quiet kubelet: a racy scenario runs once
	// more there (its family suffixed -quiet), beside its runs on the
	// shared one, whose file source a few hundred pods hold up so often
	// that podwatch says most changes with no bound on their restarts.
	quiet bool
	// trailingSlash gives the own kubelet, and podwatch, the folder's
	// path with a trailing slash.
	trailingSlash bool
	family        string // the scenario's name, shared by all its runs
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
	// The scenarios the in-process harness (../differential) plays too,
	// in this language; it also plays those of ours it can.
	shared, err := filepath.Glob("../scenarios/shared/*.txtar")
	if err != nil || len(shared) == 0 {
		t.Fatalf("no scenarios in ../scenarios/shared: %v", err)
	}
	files = append(files, shared...)
	runs := 0
	if v := os.Getenv("JUDGE_RUNS"); v != "" {
		if runs, err = strconv.Atoi(v); err != nil || runs < 2 {
			t.Fatalf("JUDGE_RUNS wants a number of 2 or more, not %q", v)
		}
	}
	var out []scenario
	owner := map[string]string{} // file or pod name -> scenario, to keep them apart
	for _, f := range files {
		base, err := parseScenario(f)
		if err != nil {
			t.Fatal(err)
		}
		if runs > 0 && base.runs > 1 {
			base.runs = runs
		}
		for i := 1; i <= base.runs; i++ {
			sc := base.instance(i)
			if sc.ownKubelet {
				out = append(out, sc)
				continue
			}
			for _, n := range append(sc.fileNames(), sc.pods...) {
				if o, ok := owner[n]; ok {
					t.Fatalf("%s and %s both use %q; scenarios share one folder and kubelet", o, sc.name, n)
				}
				owner[n] = sc.name
			}
			out = append(out, sc)
		}
		if base.runs > 1 && !base.ownKubelet {
			q := base.renamed(base.family + "-quiet")
			q.family, q.quiet, q.runs = q.name, true, 1
			out = append(out, q)
		}
	}
	return out
}

// instance is run i of the scenario: for i > 1, its name suffixed with -i
// wherever it appears in a step, a fixture or a pod's name, so that runs
// side by side in one folder keep apart.
func (sc scenario) instance(i int) scenario {
	if i == 1 {
		return sc
	}
	return sc.renamed(fmt.Sprintf("%s-%d", sc.family, i))
}

// renamed is the scenario with its family's name replaced by name
// wherever it appears in a step, a fixture or a pod's name.
func (sc scenario) renamed(name string) scenario {
	r := strings.NewReplacer(sc.family, name)
	out := sc
	out.name = name
	out.fixtures = map[string][]byte{}
	for n, b := range sc.fixtures {
		out.fixtures[n] = []byte(r.Replace(string(b)))
	}
	out.outcomes = nil
	for _, o := range sc.outcomes {
		out.outcomes = append(out.outcomes, r.Replace(o))
	}
	out.pods = nil
	for _, p := range sc.pods {
		out.pods = append(out.pods, r.Replace(p))
	}
	out.steps = nil
	for _, s := range sc.steps {
		s.args = slices.Clone(s.args)
		for j, a := range s.args {
			if !(s.fixture() && j == 0) { // a fixture's name stays
				s.args[j] = r.Replace(a)
			}
		}
		out.steps = append(out.steps, s)
	}
	return out
}

func parseScenario(file string) (scenario, error) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		return scenario{}, err
	}
	name := strings.TrimSuffix(filepath.Base(file), ".txtar")
	sc := scenario{name: name, family: name, fixtures: map[string][]byte{}, runs: 1}
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
	// The arguments each verb takes, fewest and most (-1: no bound).
	want := map[string][2]int{"write": {3, 3}, "rename": {2, 2}, "remove": {1, 1}, "symlink": {2, 2}, "chmod": {2, 2}, "sed": {2, 2}, "cp": {2, 3}, "chunks": {5, -1},
		"move-folder": {1, 1}, "remove-folder": {0, 0}, "make-folder": {0, 0},
		"settle": {0, 0}, "relist": {0, 0}, "phase-known": {0, 0}, "hold": {1, 1}, "write-in-relist": {3, 3}}
	missing := false // the folder is away or deleted
	folderStep := 0  // the line of a step on the folder itself
	for i, l := range strings.Split(string(a.Comment), "\n") {
		fields := strings.Fields(l)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if key, val, ok := strings.Cut(l, ":"); ok && !strings.ContainsAny(key, " \t") {
			if err := sc.directive(key, strings.TrimSpace(val)); err != nil {
				return scenario{}, fmt.Errorf("%s:%d: %v", file, i+1, err)
			}
			continue
		}
		s := step{line: i + 1, verb: fields[0], args: fields[1:]}
		n, ok := want[s.verb]
		if !ok || len(s.args) < n[0] || (n[1] >= 0 && len(s.args) > n[1]) || (s.fixture() && s.args[1] != "as") {
			return scenario{}, fmt.Errorf("%s:%d: cannot read step %q", file, s.line, l)
		}
		if s.fixture() {
			f, ok := sc.fixtures[s.args[0]]
			if !ok {
				return scenario{}, fmt.Errorf("%s:%d: no fixture %q", file, s.line, s.args[0])
			}
			if s.verb == "chunks" {
				if d, err := time.ParseDuration(s.args[3]); err != nil || d <= 0 || d > 5*time.Second {
					return scenario{}, fmt.Errorf("%s:%d: chunks wants a pause up to 5s, not %q", file, s.line, s.args[3])
				}
				if _, err := chunksOf(f, s.args[4:]); err != nil {
					return scenario{}, fmt.Errorf("%s:%d: %v", file, s.line, err)
				}
			}
		}
		switch s.verb {
		case "move-folder", "remove-folder", "make-folder":
			folderStep = s.line
			gone := s.verb == "remove-folder" || (s.verb == "move-folder" && s.args[0] == "away")
			if (s.verb == "move-folder" && s.args[0] != "away" && s.args[0] != "back") || gone == missing {
				return scenario{}, fmt.Errorf("%s:%d: %q does not fit a folder that is %s", file, s.line, l, map[bool]string{true: "missing", false: "there"}[missing])
			}
			missing = gone
		case "settle":
			if missing {
				return scenario{}, fmt.Errorf("%s:%d: settle needs the folder there, for its barrier", file, s.line)
			}
		}
		if s.verb == "chmod" {
			if _, err := strconv.ParseUint(s.args[0], 8, 32); err != nil {
				return scenario{}, fmt.Errorf("%s:%d: chmod wants an octal mode, not %q", file, s.line, s.args[0])
			}
		}
		if s.verb == "hold" {
			if d, err := time.ParseDuration(s.args[0]); err != nil || d <= 0 || d > 10*time.Second {
				return scenario{}, fmt.Errorf("%s:%d: hold wants a duration up to 10s, not %q", file, s.line, s.args[0])
			}
		}
		sc.steps = append(sc.steps, s)
	}
	if folderStep > 0 && !sc.ownKubelet {
		return scenario{}, fmt.Errorf("%s:%d: a step on the folder takes the kubelet's watch for good: the scenario needs \"kubelet: own\"", file, folderStep)
	}
	if len(sc.outcomes) > 0 && sc.runs < 2 {
		return scenario{}, fmt.Errorf("%s: outcome lines are for a scenario with runs of 2 or more", file)
	}
	if sc.runs > 1 {
		for _, n := range append(sc.fileNames(), sc.pods...) {
			if !strings.Contains(n, sc.family) {
				return scenario{}, fmt.Errorf("%s: runs: %q must contain the scenario's name to be told apart run by run", file, n)
			}
		}
	}
	for _, n := range sc.fileNames() {
		// The kubelet's relist is told by two folders whose names sort
		// before and after every manifest's (kubelet.Kubelet.RelistClock).
		if !strings.HasPrefix(n, ".") && (n <= "!relist-clock" || n >= "~relist-end") {
			return scenario{}, fmt.Errorf("%s: %q must sort between !relist-clock and ~relist-end", file, n)
		}
	}
	if len(sc.steps) == 0 || sc.steps[len(sc.steps)-1].verb != "settle" {
		return scenario{}, fmt.Errorf("%s: the last step must be settle", file)
	}
	return sc, nil
}

func (sc *scenario) directive(key, val string) error {
	switch key {
	case "known-disagreement":
		if val == "" {
			return fmt.Errorf("known-disagreement needs a reason")
		}
		sc.disagreement = val
	case "runs":
		n, err := strconv.Atoi(val)
		if err != nil || n < 2 {
			return fmt.Errorf("runs wants a number of 2 or more, not %q", val)
		}
		sc.runs = n
	case "outcome":
		sc.outcomes = append(sc.outcomes, val)
	case "kubelet":
		switch val {
		case "own":
		case "own, trailing slash":
			sc.trailingSlash = true
		default:
			return fmt.Errorf(`kubelet: wants "own" or "own, trailing slash", not %q`, val)
		}
		sc.ownKubelet = true
	default:
		return fmt.Errorf("unknown line %q", key)
	}
	return nil
}

// filesOf are the names the scenario's steps write a fixture defining the
// pod ns/name to; all the names its steps create when none does (the pod
// is written some other way).
func (sc scenario) filesOf(pod string) []string {
	var out []string
	for _, s := range sc.steps {
		if !s.fixture() || s.verb == "cp" {
			continue
		}
		var m struct {
			Metadata struct{ Name, Namespace string }
		}
		if yaml.Unmarshal(sc.fixtures[s.args[0]], &m) != nil || m.Metadata.Name == "" {
			continue
		}
		ns := m.Metadata.Namespace
		if ns == "" {
			ns = "default"
		}
		if ns+"/"+m.Metadata.Name == pod && !slices.Contains(out, s.args[2]) {
			out = append(out, s.args[2])
		}
	}
	if len(out) == 0 {
		return sc.fileNames()
	}
	return out
}

// fileNames are the names the scenario's steps create in the folder.
func (sc scenario) fileNames() []string {
	var out []string
	for _, s := range sc.steps {
		switch s.verb {
		case "write", "chunks", "write-in-relist":
			out = append(out, s.args[2])
		case "rename":
			out = append(out, s.args[1])
		case "cp":
			out = append(out, s.args[len(s.args)-1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fixture reports whether the step's first argument names a fixture.
func (s step) fixture() bool {
	return s.verb == "write" || s.verb == "chunks" || s.verb == "write-in-relist" || (s.verb == "cp" && len(s.args) == 3)
}

// chunksOf splits b after each cut in turn, each searched for from the end
// of the one before; the rest is the last chunk.
func chunksOf(b []byte, cuts []string) ([][]byte, error) {
	var out [][]byte
	for _, c := range cuts {
		i := bytes.Index(b, []byte(c))
		if i < 0 {
			return nil, fmt.Errorf("chunks: no %q left in the fixture to cut after", c)
		}
		out, b = append(out, b[:i+len(c)]), b[i+len(c):]
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("chunks: the last cut %q leaves nothing for a last chunk", cuts[len(cuts)-1])
	}
	return append(out, b), nil
}

// apply does a step that changes the kubelet's folder. scratch is a folder
// outside it, for cp's sources.
func (s step) apply(k *kubelet.Kubelet, sc scenario, scratch string) error {
	dir := k.Manifests
	switch s.verb {
	case "write":
		return os.WriteFile(filepath.Join(dir, s.args[2]), sc.fixtures[s.args[0]], 0o644)
	case "cp":
		src, dst := filepath.Join(dir, s.args[0]), filepath.Join(dir, s.args[1])
		if len(s.args) == 3 {
			src, dst = filepath.Join(scratch, s.args[0]), filepath.Join(dir, s.args[2])
			if err := os.WriteFile(src, sc.fixtures[s.args[0]], 0o644); err != nil {
				return err
			}
		}
		if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
			return fmt.Errorf("cp %s %s: %v: %s", src, dst, err, out)
		}
		return nil
	case "chunks":
		chunks, err := chunksOf(sc.fixtures[s.args[0]], s.args[4:])
		if err != nil {
			return err
		}
		pause, _ := time.ParseDuration(s.args[3]) // checked when parsed
		f, err := os.OpenFile(filepath.Join(dir, s.args[2]), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		for i, c := range chunks {
			if i > 0 {
				// The writer is slow: what the scenario does, not a
				// wait for a side.
				time.Sleep(pause)
			}
			if _, err := f.Write(c); err != nil {
				f.Close()
				return err
			}
		}
		return f.Close()
	case "move-folder":
		away := dir + ".away"
		if s.args[0] == "away" {
			return os.Rename(dir, away)
		}
		return os.Rename(away, dir)
	case "remove-folder":
		return os.RemoveAll(dir)
	case "make-folder":
		// With the folders that tell the kubelet's relists.
		for _, d := range []string{dir, k.RelistClock, k.RelistEnd} {
			if err := os.Mkdir(d, 0o755); err != nil {
				return err
			}
		}
		return nil
	case "rename":
		return os.Rename(filepath.Join(dir, s.args[0]), filepath.Join(dir, s.args[1]))
	case "remove":
		return os.Remove(filepath.Join(dir, s.args[0]))
	case "symlink":
		return os.Symlink(s.args[0], filepath.Join(dir, s.args[1]))
	case "chmod":
		mode, _ := strconv.ParseUint(s.args[0], 8, 32) // checked when parsed
		return os.Chmod(filepath.Join(dir, s.args[1]), os.FileMode(mode))
	case "sed":
		// The real sed -i: a temporary file in the folder, renamed over.
		if out, err := exec.Command("sed", "-i", s.args[0], filepath.Join(dir, s.args[1])).CombinedOutput(); err != nil {
			return fmt.Errorf("sed -i %s %s: %v: %s", s.args[0], s.args[1], err, out)
		}
		return nil
	case "hold":
		d, _ := time.ParseDuration(s.args[0]) // checked when parsed
		// The folder stays as it is for d: what the scenario does, not a
		// wait for the kubelet or podwatch.
		time.Sleep(d)
		return nil
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
		// The judge pairs a pod's REMOVE with the relists that could not
		// read its own files: seen-relist's ten pods turn invalid one at
		// a time, each in a file of its own.
		if sc.name == "seen-relist" {
			if got := sc.filesOf("judge/seen-relist-2"); !slices.Equal(got, []string{"seen-relist-2.yaml"}) {
				t.Errorf("seen-relist: the files of judge/seen-relist-2 are %q, want seen-relist-2.yaml alone", got)
			}
		}
	}
}
