package differential

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/test/tools/claimcheck"
)

// engineRoundsEnv sets how many rounds TestEngineFuzz plays (default 8).
const engineRoundsEnv = "PODWATCH_ENGINE_FUZZ_ROUNDS"

// engineHogEnv, a count, has TestEngineFuzz keep that many goroutines
// spinning while the rounds play, so that the kubelet's file source and
// podwatch's fall behind the changes.
const engineHogEnv = "PODWATCH_ENGINE_FUZZ_HOG"

// engineSettleEnv sets podwatch's settle delay in the engines' replay
// (a duration; default diff.DefaultSettleDelay). TestEngineFuzz sets it
// for its children, which judge the engines only when it is set.
const engineSettleEnv = "PODWATCH_ENGINE_FUZZ_SETTLE"

// engineStrictEnv names, comma-separated, the engines of which every
// uncovered round fails TestEngineFuzz ("all" for every one; default
// none). Without it, an engine need only cover its floor of the rounds.
const engineStrictEnv = "PODWATCH_ENGINE_FUZZ_STRICT"

func strictEngine(engine string) bool {
	s := os.Getenv(engineStrictEnv)
	return s == "all" || slices.Contains(strings.Split(s, ","), engine)
}

// engineFloor is the share of rounds an engine not judged strictly must
// cover. The port does not cover every round yet: it misses a restart
// back to the pod it published (two files of one pod, one deleted, the
// other read again) and an ADD of a file gone before the kubelet read it.
// Its floor sits well below the nine rounds in ten it covers, so that
// chance fails no run of a few rounds and a gross regression does.
func engineFloor(engine string) float64 {
	if engine == portEngine {
		return 0.5
	}
	return 0
}

// engineRecordEnv names a folder where TestEngineFuzz writes each round
// the port did not cover as a Recording (<seed>.json), for
// testdata/engine.
const engineRecordEnv = "PODWATCH_ENGINE_FUZZ_RECORD"

func fuzzSettle() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(engineSettleEnv)); err == nil {
		return d
	}
	return diff.DefaultSettleDelay
}

// childSettle is a child's settle delay for FuzzRound: negative, to judge
// no engine, when no TestEngineFuzz started it.
func childSettle() time.Duration {
	if os.Getenv(engineSettleEnv) == "" {
		return -1
	}
	return max(fuzzSettle(), 0)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// hog keeps n goroutines busy until the test ends.
func hog(t *testing.T, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for x := 0; ctx.Err() == nil; x++ {
				if x%(1<<16) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// engineTally counts one engine's verdicts over the rounds.
type engineTally struct {
	covered, uncovered, errs int
	claims, capped, cappedIn int
	folded, foldedIn         int
	width, unbounded         int
	// misses counts the pods missed by which way (claimcheck.Miss), and
	// "end" for a pod that ends elsewhere.
	misses map[string]int
	// smallest is the uncovered round with the fewest changes.
	smallest *FuzzResult
	seeds    []uint64
}

// TestEngineFuzz plays random rounds of changes to the kubelet's own file
// source and pod config and, over podwatch's snapshots of the same
// folder, steps each diff engine as the agent does, with the kubelet's
// relists told and not: every pod's operations in the kubelet must fall
// within the claims the engine made of it (claimcheck.Covers): in every
// round for an engine named in PODWATCH_ENGINE_FUZZ_STRICT, in its floor
// of the rounds otherwise.
func TestEngineFuzz(t *testing.T) {
	rounds := envInt(t, engineRoundsEnv, 8)
	t.Setenv(engineSettleEnv, fuzzSettle().String())
	if n := envInt(t, engineHogEnv, 0); n > 0 {
		hog(t, n)
	}
	base := uint64(time.Now().UnixNano())
	tallies := map[string]*engineTally{}
	var names []string
	failed := 0
	for i := range rounds {
		seed := base + uint64(i)
		res, ok := fuzzRound(t, seed)
		if !ok {
			failed++
			continue
		}
		if rec := res.Recording; rec != nil {
			replayed(t, rec, res.Engines)
			if dir := os.Getenv(engineRecordEnv); dir != "" && !rec.Verdicts[portEngine+"/seen"] {
				if err := rec.WriteFile(filepath.Join(dir, strconv.FormatUint(seed, 10)+".json")); err != nil {
					t.Error(err)
				}
			}
		}
		for _, e := range res.Engines {
			name := e.Engine + "/" + e.Relists
			tl := tallies[name]
			if tl == nil {
				tl = &engineTally{}
				tallies[name] = tl
				names = append(names, name)
			}
			tl.claims += e.Claims
			tl.capped += e.Capped
			if e.Capped > 0 {
				tl.cappedIn++
			}
			tl.folded += e.Folded
			if e.Folded > 0 {
				tl.foldedIn++
			}
			tl.width = max(tl.width, e.Width)
			tl.unbounded += e.Unbounded
			report := t.Logf
			if strictEngine(e.Engine) {
				report = t.Errorf
			}
			switch {
			case e.Error != "":
				tl.errs++
				report("seed %d, %s: %s", seed, name, e.Error)
			case e.Covered:
				tl.covered++
			default:
				tl.uncovered++
				tl.seeds = append(tl.seeds, seed)
				for _, pc := range e.Uncovered {
					if tl.misses == nil {
						tl.misses = map[string]int{}
					}
					if pc.Miss != "" {
						tl.misses[pc.Miss]++
					}
					if pc.Ends != nil {
						tl.misses["end"]++
					}
				}
				if tl.smallest == nil || len(res.Ops) < len(tl.smallest.Ops) {
					tl.smallest = res
				}
				report("seed %d: the kubelet's operations fall outside %s's claims: %v\nops %q", seed, name, e, res.Ops)
				if e.Engine == portEngine || strictEngine(e.Engine) {
					t.Logf("seed %d, %s, step by step:\n%s", seed, name, strings.Join(e.Debug, "\n"))
				}
			}
		}
	}
	if failed > rounds/4 {
		t.Errorf("%d of %d rounds gave no result", failed, rounds)
	}
	slices.Sort(names)
	for _, name := range names {
		tl := tallies[name]
		judged := tl.covered + tl.uncovered + tl.errs
		if engine, _, _ := strings.Cut(name, "/"); judged > 0 && float64(tl.covered) < engineFloor(engine)*float64(judged) {
			t.Errorf("%s covered %d of %d rounds, below its floor of %.0f%%", name, tl.covered, judged, 100*engineFloor(engine))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rounds from seed %d (%d gave no result, settle %v, hog %s):", rounds, base, failed, fuzzSettle(), os.Getenv(engineHogEnv))
	for _, name := range names {
		tl := tallies[name]
		fmt.Fprintf(&b, "\n  %-18s covered %d, uncovered %d %v, errors %d; %d claims, %d capped (in %d rounds), %d folded (in %d rounds), widest bounded %d, %d unbounded",
			name, tl.covered, tl.uncovered, tl.seeds, tl.errs, tl.claims, tl.capped, tl.cappedIn, tl.folded, tl.foldedIn, tl.width, tl.unbounded)
		if len(tl.misses) > 0 {
			fmt.Fprintf(&b, "\n    pods missed: %d with more restarts than said, %d with fewer, %d otherwise, %d ending elsewhere",
				tl.misses["more"], tl.misses["fewer"], tl.misses["other"], tl.misses["end"])
		}
		if s := tl.smallest; s != nil {
			fmt.Fprintf(&b, "\n    smallest uncovered: seed %d, ops %q", s.Seed, s.Ops)
		}
	}
	t.Log(b.String())
}

// judgeClaims finds a pod the kubelet restarted where the claims allow
// none, and a pod the kubelet ran that podwatch never spoke of.
func TestJudgeClaimsFindsWhatTheClaimsMiss(t *testing.T) {
	add := claimcheck.Said{Op: "ADD", ID: 1}
	a, b := "default/a-"+node, "default/b-"+node
	res := judgeClaims(map[string][]claimcheck.Said{a: {add}}, map[string][]string{a: {"ADD", "REMOVE", "ADD"}, b: {"ADD"}}, nil)
	if res.Covered || len(res.Uncovered) != 2 || res.Pods != 2 {
		t.Fatalf("judged %+v, want both pods uncovered", res)
	}
	add.Max = 1
	res = judgeClaims(map[string][]claimcheck.Said{a: {add}, b: {{Op: "ADD", ID: 2}}}, map[string][]string{a: {"ADD", "REMOVE", "ADD"}, b: {"ADD"}}, nil)
	if !res.Covered || res.Width != 1 {
		t.Errorf("judged %+v, want covered with a width of 1", res)
	}
}

// judgeEnds finds a pod that an engine ends on another image than the
// kubelet, or runs where the kubelet runs none.
func TestJudgeEndsFindsAnotherEnd(t *testing.T) {
	a, b := "default/a-"+node, "default/b-"+node
	res := EngineResult{Covered: true}
	judgeEnds(&res, map[string]string{a: "img:2", b: "img:1"}, map[string][]string{a: {"", "img:1", "img:2"}, b: {"", "img:1", ""}})
	if res.Covered || len(res.Uncovered) != 1 || !slices.Equal(res.Uncovered[b].Ends, []string{"img:1", ""}) {
		t.Errorf("judged %+v, want b alone uncovered, running img:1 where the kubelet runs none", res)
	}
}

// replayed requires the recording of a round to replay to the verdicts
// the round came to: what it keeps is all the engines read.
func replayed(t *testing.T, rec *Recording, live []EngineResult) {
	t.Helper()
	again := rec.Replay()
	for i, e := range live {
		if i >= len(again) || again[i].Covered != e.Covered || again[i].Claims != e.Claims {
			t.Errorf("seed %d: %s/%s replayed from its recording comes to another verdict:\nlive %v\nagain %v", rec.Seed, e.Engine, e.Relists, e, again[min(i, len(again)-1)])
		}
	}
}

// TestEngineRecorded replays the rounds kept in testdata/engine, each a
// timeline on which an engine's claims missed what the kubelet did, or
// once did: a round an engine covered when recorded must stay covered,
// and one it did not is logged until it does (and fails under
// PODWATCH_ENGINE_FUZZ_STRICT for the engines named there).
func TestEngineRecorded(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "engine", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no recorded round in testdata/engine")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			rec, err := ReadRecording(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s\nops %q", rec.Why, rec.Ops)
			for _, e := range rec.Replay() {
				name := e.Engine + "/" + e.Relists
				was, known := rec.Verdicts[name]
				switch {
				case e.Covered && known && !was:
					t.Logf("%s now covers this round: record it again", name)
				case e.Covered:
				case was || strictEngine(e.Engine):
					t.Errorf("%s does not cover this round: %v\n%s", name, e, strings.Join(e.Debug, "\n"))
				default:
					t.Logf("%s does not cover this round yet: %v", name, e)
				}
			}
		})
	}
}
