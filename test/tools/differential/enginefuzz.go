package differential

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"github.com/podwatch/podwatch/pkg/diff"
	ptypes "github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/claimcheck"
)

// A fuzz round also replays podwatch's snapshots through its diff engine
// (diff.Advance, as the agent's loop calls it), once per engine, and
// judges each change it says by its claim: what the kubelet's pod config
// did to each pod, ADD, UPDATE and REMOVE in order, must be one of the
// sequences the claims allow (claimcheck.Covers).
//
// The replay runs on the snapshots' own times, which the real clock wrote:
// a snapshot is stepped at its time, a change waiting to settle at the
// time the engine asked for, and a relist of the kubelet's, when the
// engine is told of them, is taken in a moment after it ended, as the
// agent takes in what its relist detector saw (relistLag). The relists are
// the kubelet's own, from its log, as a detector with the phase known
// would report them; after the round, the kubelet goes on relisting every
// period over a quiet folder, until the engine has nothing waiting.

// EngineResult is one engine's verdict on a round.
type EngineResult struct {
	Engine string `json:"engine"`
	// Relists says whether the engine was told the kubelet's relists
	// ("seen") or not ("unseen": its own list stands in, an estimate).
	Relists string `json:"relists"`
	Covered bool   `json:"covered"`
	// Claims counts the pod changes said, Capped those of them whose
	// claim was capped, Folded those widened after a forced fold of the
	// window, Pods the pods judged.
	Claims int `json:"claims"`
	Capped int `json:"capped"`
	Folded int `json:"folded"`
	Pods   int `json:"pods"`
	// Uncovered is, per pod not covered, what podwatch said and what the
	// kubelet did.
	Uncovered map[string]PodClaims `json:"uncovered,omitempty"`
	// Width is the largest before.max - before.min of a bounded claim;
	// Unbounded counts the claims with no bound.
	Width     int    `json:"width"`
	Unbounded int    `json:"unbounded"`
	Error     string `json:"error,omitempty"`
	// Debug is the replay, step by step, for a round not covered.
	Debug []string `json:"debug,omitempty"`
}

// PodClaims is what podwatch said of a pod, claim by claim, and what the
// kubelet did.
type PodClaims struct {
	Said    []string `json:"said"`
	Kubelet []string `json:"kubelet"`
	// Miss is which way the claims missed (claimcheck.Miss).
	Miss string `json:"miss,omitempty"`
	// Ends, set when they differ: the image podwatch published last and
	// the one the kubelet runs at the end ("" for none).
	Ends []string `json:"ends,omitempty"`
}

// relistSpans are the whole relists of log.
func relistSpans(log []logEntry) []RelistSpan {
	var out []RelistSpan
	var open *time.Time
	for _, e := range log {
		switch {
		case e.relist && filepath.Base(e.path) == clockFirst:
			at := e.at
			open = &at
		case e.relist && filepath.Base(e.path) == clockLast && open != nil:
			out = append(out, RelistSpan{Begin: *open, End: e.at})
			open = nil
		}
	}
	return out
}

// kubeletOps are, per pod, the pod config's operations in updates, in
// order: a status-only RECONCILE is none.
func kubeletOps(updates []kubetypes.PodUpdate, keep func(key string) bool) map[string][]string {
	ops := map[string][]string{}
	for _, u := range updates {
		var op string
		switch u.Op {
		case kubetypes.ADD:
			op = "ADD"
		case kubetypes.UPDATE:
			op = "UPDATE"
		case kubetypes.REMOVE, kubetypes.DELETE:
			op = "REMOVE"
		default:
			continue
		}
		for _, p := range u.Pods {
			if key := p.Namespace + "/" + p.Name; keep(key) {
				ops[key] = append(ops[key], op)
			}
		}
	}
	return ops
}

// running are the pods the kubelet runs after ops.
func running(ops map[string][]string) map[string]bool {
	out := map[string]bool{}
	for key, o := range ops {
		out[key] = len(o) > 0 && o[len(o)-1] != "REMOVE"
	}
	return out
}

// fuzzPod says whether key is one of the round's pods, not the harness's.
func fuzzPod(key string) bool {
	for pod := range fuzzNames {
		if key == v1.NamespaceDefault+"/"+pod+"-"+node {
			return true
		}
	}
	return false
}

// portEngine names the diff's engine, the port, in verdicts and
// recordings.
const portEngine = "port"

// engineVerdicts replays snaps through the engine, with the kubelet's
// relists told and not, and judges the claims against kubelet.
// runs are the images the kubelet ran, pod by pod (kubeletRuns): the last
// of each is what it runs at the end, which the last pod an engine
// published must be.
// start says which pods the kubelet ran before the changes.
func engineVerdicts(snaps []ptypes.Snapshot, relists []RelistSpan, dir string, period, settle time.Duration, kubelet, runs map[string][]string, start map[string]bool) []EngineResult {
	var out []EngineResult
	for _, engine := range []string{portEngine} {
		for _, seen := range []bool{true, false} {
			opts := diff.Options{NodeName: node, Path: dir, SettleDelay: settle, RelistPeriod: period}
			said, stats := replayEngine(snaps, relists, opts, seen)
			res := judgeClaims(said, kubelet, start)
			judgeEnds(&res, stats.published, runs)
			if !res.Covered {
				res.Debug = stats.debug
			}
			res.Engine, res.Relists = engine, "unseen"
			if seen {
				res.Relists = "seen"
			}
			res.Claims, res.Capped, res.Folded, res.Error = stats.claims, stats.capped, stats.folded, stats.err
			out = append(out, res)
		}
	}
	return out
}

type replayStats struct {
	claims, capped, folded int
	err                    string
	debug                  []string
	// published is, per pod of the round, the image of the pod the
	// engine published last.
	published map[string]string
}

// replayHorizon bounds how long past the last snapshot the replay goes on
// stepping the engine for what waits to settle.
const replayHorizon = 30 * time.Second

// replayEngine steps an engine over snaps as the agent's loop does, and
// returns the claims it made of each of the round's pods, amendments
// applied. The first snapshot is the folder before the round's changes:
// what the engine says of it is the start, not a change.
func replayEngine(snaps []ptypes.Snapshot, relists []RelistSpan, opts diff.Options, seen bool) (map[string][]claimcheck.Said, replayStats) {
	stats := replayStats{published: map[string]string{}}
	said := map[string][]claimcheck.Said{}
	if len(snaps) == 0 {
		stats.err = "no snapshot"
		return said, stats
	}
	lag := min(750*time.Millisecond, opts.RelistPeriod/2)
	// The kubelet goes on relisting after the round, every period.
	last := snaps[len(snaps)-1].Time
	end := last.Add(replayHorizon)
	// Past the log's relists and two more, with every snapshot in and
	// nothing waiting, the replay is done.
	stop := 0
	if seen {
		stop = len(relists) + 2
		relists = slices.Clone(relists)
		next := last
		if len(relists) > 0 {
			next = relists[len(relists)-1].Begin
		}
		for next = next.Add(opts.RelistPeriod); next.Before(end); next = next.Add(opts.RelistPeriod) {
			relists = append(relists, RelistSpan{Begin: next, End: next})
		}
		stop = min(stop, len(relists))
	} else {
		relists = nil
	}
	var (
		state   diff.State
		snap    ptypes.Snapshot
		told    time.Time // the kubelet relist the engine was told of
		recheck time.Time
		started bool
	)
	step := func(now time.Time) {
		s := snap
		s.KubeletRelist = told
		changes, at := diff.Advance(&state, s, now, opts)
		recheck = at
		clear(stats.published)
		for key, p := range state.Pods {
			var pod v1.Pod
			if fuzzPod(key) && json.Unmarshal(p.JSON, &pod) == nil {
				stats.published[key] = images(&pod)
			}
		}
		for _, ch := range changes {
			if ch.Claim != nil {
				js, _ := json.Marshal(ch.Claim)
				stats.debug = append(stats.debug, fmt.Sprintf("  %s, told the relist @%s: %s %s %s %s",
					now.Format("05.000000"), told.Format("05.000000"), ch.Object.Name, ch.Reason, ch.File, js))
			}
		}
		if !started {
			return
		}
		for _, ch := range changes {
			key := ch.Object.Namespace + "/" + ch.Object.Name
			if ch.Object.Kind != ptypes.KindPod || !fuzzPod(key) || ch.Claim == nil {
				continue
			}
			switch {
			case ch.Op != "":
				s := claimcheck.FromClaim(*ch.Claim)
				said[key] = append(said[key], s)
				stats.claims++
				if s.Capped {
					stats.capped++
				}
				if s.Folded {
					stats.folded++
				}
			case ch.Reason == ptypes.ReasonMayHaveRestarted:
				claimcheck.Amend(said[key], ch.Claim.Amends)
			}
		}
	}
	// Past the snapshots, podwatch's source goes on listing the quiet
	// folder every period, on its own grid: a relist of the kubelet's told
	// the engine enters its timeline with the next snapshot.
	ownGrid := snaps[0].Time
	for _, s := range snaps {
		if s.Relist {
			ownGrid = s.Time
		}
	}
	nextOwn := ownGrid.Add(opts.RelistPeriod)
	for !nextOwn.After(last) {
		nextOwn = nextOwn.Add(opts.RelistPeriod)
	}
	var lastTold time.Time // when the last relist was taken in
	i, r := 0, 0
	for {
		if i == len(snaps) && recheck.IsZero() && r >= stop && !snap.Time.Before(lastTold) {
			return said, stats
		}
		// The next thing to happen: a snapshot, a relist taken in, or a
		// recheck.
		next, kind := end, ""
		switch {
		case i < len(snaps):
			next, kind = snaps[i].Time, "snap"
		case nextOwn.Before(end):
			next, kind = nextOwn, "own"
		}
		if r < len(relists) && relists[r].End.Add(lag).Before(next) {
			next, kind = relists[r].End.Add(lag), "relist"
		}
		if !recheck.IsZero() && recheck.Before(next) {
			next, kind = recheck, "recheck"
		}
		switch kind {
		case "":
			if !recheck.IsZero() {
				stats.err = "still waiting to settle past the horizon"
			}
			return said, stats
		case "snap":
			snap = snaps[i]
			if i == 0 {
				snap = wholeFiles(snap)
			}
			stats.debug = append(stats.debug, snapDebug(snap))
			i++
			step(next)
			started = true
		case "own":
			snap.Time, snap.Seq, snap.Relist, snap.Extra, snap.Events, snap.Changed = next, snap.Seq+1, true, false, nil, nil
			nextOwn = nextOwn.Add(opts.RelistPeriod)
			step(next)
		case "relist":
			told, lastTold = relists[r].Begin, next
			r++
			if started {
				step(next)
			}
		case "recheck":
			step(next)
		}
	}
}

// wholeFiles is s, the folder before the round, with every file known
// whole: the harness moved each in before podwatch started, and the start
// is what the engine publishes of it at once, not a change that waits.
func wholeFiles(s ptypes.Snapshot) ptypes.Snapshot {
	files := make([]*ptypes.File, len(s.Files))
	for i, f := range s.Files {
		c := *f
		c.Complete = true
		files[i] = &c
	}
	s.Files = files
	return s
}

// judgeEnds holds what each pod ends as in res's engine, by what it
// published last, to what the kubelet runs at the end.
func judgeEnds(res *EngineResult, published map[string]string, runs map[string][]string) {
	keys := maps.Clone(published)
	for key := range runs {
		keys[key] = ""
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		var ran string
		if r := runs[key]; len(r) > 0 {
			ran = r[len(r)-1]
		}
		if published[key] == ran {
			continue
		}
		res.Covered = false
		if res.Uncovered == nil {
			res.Uncovered = map[string]PodClaims{}
		}
		pc := res.Uncovered[key]
		pc.Ends = []string{published[key], ran}
		res.Uncovered[key] = pc
	}
}

// judgeClaims holds each pod's claims to what the kubelet did to it from
// start, the pods it ran before.
func judgeClaims(said map[string][]claimcheck.Said, kubelet map[string][]string, start map[string]bool) EngineResult {
	res := EngineResult{Covered: true}
	keys := map[string]bool{}
	for k := range said {
		keys[k] = true
	}
	for k := range kubelet {
		keys[k] = true
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		res.Pods++
		for _, s := range said[key] {
			switch {
			case s.Max == claimcheck.Unbounded:
				res.Unbounded++
			default:
				res.Width = max(res.Width, s.Max-s.Min)
			}
		}
		if claimcheck.CoversFrom(said[key], kubelet[key], start[key]) {
			continue
		}
		res.Covered = false
		if res.Uncovered == nil {
			res.Uncovered = map[string]PodClaims{}
		}
		var words []string
		for _, s := range said[key] {
			words = append(words, s.String())
		}
		res.Uncovered[key] = PodClaims{Said: words, Kubelet: slices.Clone(kubelet[key]), Miss: claimcheck.Miss(said[key], kubelet[key])}
	}
	return res
}

// engineLine is a result in a few words, for the test's log.
func (r EngineResult) String() string {
	var b strings.Builder
	b.WriteString(r.Engine + "/" + r.Relists)
	for key, pc := range r.Uncovered {
		b.WriteString(" " + key + ":")
		if pc.Said != nil || pc.Kubelet != nil {
			b.WriteString(" said [" + strings.Join(pc.Said, ", ") + "], kubelet [" + strings.Join(pc.Kubelet, " ") + "]")
		}
		if pc.Ends != nil {
			b.WriteString(fmt.Sprintf(", ends as %q in podwatch, %q in the kubelet", pc.Ends[0], pc.Ends[1]))
		}
	}
	if r.Error != "" {
		b.WriteString(" (" + r.Error + ")")
	}
	return b.String()
}
