package differential

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// scenarioEnv makes the test binary, re-executed, play the scenario file it
// names and print the result instead of running tests: every kubelet file
// source keeps its goroutines and an inotify instance until the process
// ends, and instances are few (128 per user by default).
const scenarioEnv = "PODWATCH_DIFFERENTIAL_SCENARIO"

// resultPrefix starts the child's one line of JSON, so that anything else
// a library prints to stdout cannot be mistaken for it.
const resultPrefix = "differential-result: "

func TestMain(m *testing.M) {
	if path := os.Getenv(scenarioEnv); path != "" {
		os.Exit(child(path))
	}
	if seed := os.Getenv(fuzzSeedEnv); seed != "" {
		os.Exit(fuzzChild(seed))
	}
	os.Exit(m.Run())
}

// child runs one scenario and prints its Result; the exit code is 0 when a
// result could be had at all, whatever it says.
func child(path string) int {
	res := &Result{Scenario: path}
	err := inFolder("podwatch-differential-", func(ctx context.Context, dir string) error {
		sc, err := Load(path)
		if err != nil {
			return err
		}
		r, err := Run(ctx, sc, Options{Dir: dir, NodeName: node, Relist: relistPeriod, Settle: settleDelay, Wait: waitLimit})
		if err != nil {
			return err
		}
		res = r
		return nil
	})
	code := 0
	if err != nil {
		res.Error = err.Error()
		code = 1
	}
	return printResult(resultPrefix, res, code)
}

// inFolder runs f in a new folder, removed after, within childLimit.
func inFolder(pattern string, f func(ctx context.Context, dir string) error) error {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	return f(ctx, dir)
}

// printResult prints a child's one line of JSON after prefix and returns
// code, or 2 when res cannot be encoded.
func printResult(prefix string, res any, code int) int {
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("%s%s\n", prefix, out)
	return code
}

// reexec runs the test binary again, running no test, with env=value set,
// and decodes the line of its stdout after prefix into res; it reports
// whether there was one, with the run's error and stderr.
func reexec(t *testing.T, env, value, prefix string, res any) (bool, error, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), childLimit+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+value)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	found := false
	lines := bufio.NewScanner(&stdout)
	lines.Buffer(nil, 16<<20)
	for lines.Scan() {
		if js, ok := strings.CutPrefix(lines.Text(), prefix); ok {
			if err := json.Unmarshal([]byte(js), res); err != nil {
				t.Fatalf("child's result: %v", err)
			}
			found = true
		}
	}
	if !found {
		return false, runErr, stdout.String() + stderr.String()
	}
	return true, runErr, stderr.String()
}

// scenarioSources are where the scenarios come from; every scenario in a
// source marked all must be played here, the real-kubelet suite's are
// played when they use nothing but what this harness plays.
var scenarioSources = []struct {
	glob string
	all  bool
}{
	{filepath.Join("testdata", "scenarios", "*.txtar"), true},                   // this harness's alone
	{filepath.Join("..", "scenarios", "shared", "*.txtar"), true},               // both suites'
	{filepath.Join("..", "kubelet", "testdata", "scenarios", "*.txtar"), false}, // the real kubelet's
}

// minScenarios is how many scenarios the suite plays at least: fewer means
// some went missing (moved, or taken over by a step this harness does not
// play).
const minScenarios = 21

type playable struct {
	path string
	sc   *Scenario
}

// loadScenarios reads every source, and says which of the real kubelet's
// scenarios are not played here and why.
func loadScenarios(t *testing.T) []playable {
	t.Helper()
	var out []playable
	var notPlayed []string
	from := map[string]string{} // scenario name -> path
	for _, src := range scenarioSources {
		paths, err := filepath.Glob(src.glob)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Fatalf("no scenarios in %s", src.glob)
		}
		for _, path := range paths {
			sc, err := Load(path)
			if errors.Is(err, ErrKubeletOnly) && !src.all {
				// Said once, not failed: these are the real kubelet's.
				notPlayed = append(notPlayed, err.Error())
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if other, ok := from[sc.Name]; ok {
				t.Fatalf("two scenarios named %s: %s and %s", sc.Name, other, path)
			}
			from[sc.Name] = path
			out = append(out, playable{path, sc})
		}
	}
	if len(out) < minScenarios {
		t.Fatalf("found %d scenarios to play, want at least %d", len(out), minScenarios)
	}
	t.Logf("not played here:\n%s", strings.Join(notPlayed, "\n"))
	return out
}

// runChild re-executes the test binary on one scenario.
func runChild(t *testing.T, path string) *Result {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{}
	found, runErr, out := reexec(t, scenarioEnv, abs, resultPrefix, res)
	switch {
	case !found:
		t.Fatalf("child gave no result (%v)\n%s", runErr, out)
	case res.Error != "":
		t.Fatalf("child failed: %s\nstderr:\n%s", res.Error, out)
	case runErr != nil:
		t.Fatalf("child: %v\nstderr:\n%s", runErr, out)
	}
	return res
}

type row struct {
	name, kubelet, podwatch, agree string
	words                          []string // the kubelet's, suite-wide checks
	took                           time.Duration
}

// TestDifferential plays every scenario to the kubelet and to podwatch and
// requires the same verdicts, unless the scenario declares a known
// disagreement. The declaration is the real-kubelet suite's, which fails
// when it no longer holds; here the kubelet's file source may well agree
// where its sync loop does not, so agreement is no failure. Run with -v
// for the table.
func TestDifferential(t *testing.T) {
	scenarios := loadScenarios(t)
	rows := make([]row, len(scenarios))
	t.Run("scenario", func(t *testing.T) {
		for i, p := range scenarios {
			sc, path := p.sc, p.path
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				res := runChild(t, path)
				kube, pw := KubeletVerdicts(res), PodwatchVerdicts(res)
				rows[i] = row{name: sc.Name, words: kube.Words(), took: time.Since(start)}
				rows[i].kubelet, rows[i].podwatch = FormatPair(kube, pw, res.Phases, node)
				agree := kube.Equal(pw)
				detail := func() string {
					return fmt.Sprintf("kubelet:  %s\npodwatch: %s\nkubelet ops: %+v\npodwatch ops: %+v\nnotes: %q",
						rows[i].kubelet, rows[i].podwatch, res.Kubelet, res.Podwatch, res.Notes)
				}
				if len(rows[i].words) == 0 {
					// Both sides saying nothing agree, and prove nothing:
					// a pod the kubelet finds invalid is one.
					t.Errorf("the kubelet did nothing with any pod\n%s", detail())
				}
				switch {
				case agree && sc.KnownDisagreement != "":
					// The declaration is about the real kubelet, whose
					// suite fails when it no longer holds there.
					rows[i].agree = "yes (declared known-disagreement is the real kubelet's)"
				case agree:
					rows[i].agree = "yes"
				case sc.KnownDisagreement != "":
					rows[i].agree = "no (known)"
					t.Logf("known disagreement (%s)\n%s", sc.KnownDisagreement, detail())
				default:
					rows[i].agree = "NO"
					t.Errorf("podwatch disagrees with the kubelet\n%s", detail())
				}
			})
		}
	})
	t.Logf("verdicts per pod, phases separated by |:\n%s", table(rows))
	checkSuite(t, rows)
}

// checkSuite fails when the kubelet's verdicts, over all scenarios, miss a
// kind that the scenarios exist to exercise: a harness that saw nothing
// would otherwise agree with a podwatch that said nothing.
func checkSuite(t *testing.T, rows []row) {
	t.Helper()
	var all []string
	for _, r := range rows {
		if r.name == "" {
			return // a scenario failed and has said why
		}
		all = append(all, r.words...)
	}
	for _, w := range []string{Appears, Restarts, Goes, Updated} {
		if !slices.Contains(all, w) {
			t.Errorf("no scenario shows the kubelet's %q: the harness is not seeing what it should", w)
		}
	}
}

func table(rows []row) string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tkubelet\tpodwatch\tagree\ttook")
	for _, r := range rows {
		if r.name == "" {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1fs\n", r.name, r.kubelet, r.podwatch, r.agree, r.took.Seconds())
	}
	tw.Flush()
	return sb.String()
}
