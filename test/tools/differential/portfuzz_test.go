package differential

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzSeedEnv makes the re-executed test binary play one fuzz round of
// the seed it holds: every kubelet file source keeps an inotify instance
// until its process ends.
const fuzzSeedEnv = "PODWATCH_PORT_FUZZ_SEED"

// fuzzRoundsEnv sets how many rounds TestPortFuzz plays (default 24).
const fuzzRoundsEnv = "PODWATCH_PORT_FUZZ_ROUNDS"

// fuzzBaseEnv sets the first round's seed (default the clock), so that
// two builds can be held to the same rounds. The kubelet's side still
// runs on real inotify, so a round's timing may differ between runs.
const fuzzBaseEnv = "PODWATCH_PORT_FUZZ_BASE"

const fuzzPrefix = "port-fuzz-result: "

// fuzzPeriod is the kubelet's relist period in a round: short, so that
// relists fall among the changes.
const fuzzPeriod = 50 * time.Millisecond

func fuzzChild(seed string) int {
	res := &FuzzResult{}
	err := inFolder("podwatch-port-fuzz-", func(ctx context.Context, dir string) error {
		s, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return err
		}
		res.Seed = s
		r, err := FuzzRound(ctx, dir, s, fuzzPeriod, childSettle())
		if r != nil {
			res = r
		}
		return err
	})
	if err != nil {
		res.Error = err.Error()
	}
	return printResult(fuzzPrefix, res, 0)
}

// TestPortFuzz plays random rounds of changes to the kubelet's own file
// source and pod config, and requires the kubelet's outcome, pod by pod,
// to be among the ends the port explores from what a second watch saw.
// It requires the same of the ends explored from podwatch's own snapshots
// (model.Timeline), except in rounds where the kubelet ran a version
// podwatch never read, which it counts.
func TestPortFuzz(t *testing.T) {
	rounds := 24
	if s := os.Getenv(fuzzRoundsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: %v", fuzzRoundsEnv, err)
		}
		rounds = n
	}
	base := uint64(time.Now().UnixNano())
	if s := os.Getenv(fuzzBaseEnv); s != "" {
		b, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", fuzzBaseEnv, err)
		}
		base = b
	}
	var ends, maxEnds, capped int
	var bridged, bridgeCapped, blind int
	var uncovered []uint64
	// A round that could not be had (a harness wait past its limit on a
	// loaded machine, an exploration past the child's deadline) judges
	// nothing; a few are no failure, many are.
	failed := 0
	for i := range rounds {
		seed := base + uint64(i)
		res, ok := fuzzRound(t, seed)
		if !ok {
			failed++
			continue
		}
		switch {
		case res.Capped:
			capped++
			t.Logf("seed %d: capped at %d ends, not judged; ops %q", seed, res.Ends, res.Ops)
		case !res.Covered:
			t.Errorf("seed %d: the kubelet ran %v, which none of the port's %d ends has; ops %q", seed, res.Kubelet, res.Ends, res.Ops)
		}
		ends += res.Ends
		maxEnds = max(maxEnds, res.Ends)
		switch b := res.Bridge; {
		case b == nil:
		case b.Capped:
			bridgeCapped++
		case !b.Covered && len(b.Blind) > 0:
			blind++
			t.Logf("seed %d: over podwatch's snapshots, the kubelet ran %v, versions %v of which podwatch never read, and none of the port's %d ends has it",
				seed, res.Kubelet, b.Blind, b.Ends)
		case !b.Covered:
			uncovered = append(uncovered, seed)
			t.Errorf("seed %d: over podwatch's %d snapshots, the kubelet ran %v, which none of the port's %d ends has; ops %q\n%s",
				seed, b.Snapshots, res.Kubelet, b.Ends, res.Ops, strings.Join(b.Debug, "\n"))
		default:
			bridged++
		}
	}
	// The bridge's reads have more choices, and its cap is lower: about
	// one round in ten is capped or blind, and one in five at most in
	// runs seen. Rounds that judge nothing fail the test only when they
	// are half of them, far past what chance gives, so that CI is not
	// made to fail by chance.
	if failed > rounds/4 {
		t.Errorf("%d of %d rounds gave no result", failed, rounds)
	}
	if bridgeCapped+blind > rounds/2 {
		t.Errorf("%d of %d rounds over podwatch's snapshots capped or blind: the fuzz judges the bridge too little", bridgeCapped+blind, rounds)
	}
	if capped > rounds/2 {
		t.Errorf("%d of %d rounds capped: the fuzz judges too little", capped, rounds)
	}
	t.Logf("%d rounds from seed %d: %d ends explored in all, at most %d in one; %d capped; %d gave no result", rounds, base, ends, maxEnds, capped, failed)
	t.Logf("over podwatch's snapshots: %d covered, %d not (seeds %v), %d capped, %d not covered with versions podwatch never read", bridged, len(uncovered), uncovered, bridgeCapped, blind)
}

// fuzzRound runs the round of seed in a child process and returns its
// result; false, logged, when the child gave none or the round could not
// be had.
func fuzzRound(t *testing.T, seed uint64) (*FuzzResult, bool) {
	t.Helper()
	res := &FuzzResult{}
	found, runErr, out := reexec(t, fuzzSeedEnv, strconv.FormatUint(seed, 10), fuzzPrefix, res)
	switch {
	case !found:
		t.Logf("seed %d: no result (%v)\n%s", seed, runErr, out)
		return nil, false
	case res.Error != "":
		t.Logf("seed %d: %s\nops: %q", seed, res.Error, res.Ops)
		return nil, false
	}
	return res, true
}
