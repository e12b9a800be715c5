package diff

import (
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// TestIncrementalMatchesFull drives random folders through three chains of
// steps: Compute on the full path alone, Compute with every fast path, and
// Advance (which changes the State in place), with snapshots numbered and
// naming what they changed as the file source's do. Every step must give
// the same changes, state and recheck time on all three, and a State taken
// with Share must never change afterwards. A step of the port explores its
// window, hence the few seeds.
func TestIncrementalMatchesFull(t *testing.T) {
	incrementalMatchesFull(t, testOpts, 100)
}

func incrementalMatchesFull(t *testing.T, testOpts Options, seeds uint64) {
	names := []string{"a.yaml", "b.yaml", "c.yaml", "c.yaml.bak", "d.yaml", "e.yaml", "f.yaml", "g.yaml"}
	images := []string{"img:1", "img:2", "img:3"}
	pods := podVariants{}
	badErr := errors.New("spec.containers[0].image: Required value")
	readErr := errors.New("permission denied")
	incSteps, incChanges, incProblems := 0, 0, 0
	const steps = 40
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 11))
		now := t0
		files := map[string]*types.File{}
		full, fast, adv := State{}, State{}, State{}
		type frozen struct{ shared, copy State }
		var shared []frozen
		var seq uint64
		for step := range steps {
			changed := map[string]bool{}
			for range 1 + rng.IntN(2) {
				name := names[rng.IntN(len(names))]
				changed[name] = true
				f := &types.File{Name: name, Path: "/m/" + name, ChangedAt: now.Add(-time.Duration(rng.IntN(5)) * time.Second), Complete: rng.IntN(6) > 0}
				key := "k-" + name // most files define a pod of their own
				if rng.IntN(30) == 0 || name == "c.yaml.bak" && rng.IntN(6) == 0 {
					key = "k-" + names[rng.IntN(4)]
				}
				switch r := rng.IntN(40); {
				case r < 2 && files[name] != nil:
					g := *files[name] // the same content seen again
					g.Complete = g.Complete || f.Complete
					f = &g
				case r < 30:
					f.Pod = pods.get(key, images[rng.IntN(len(images))], rng.IntN(5) == 0, rng.IntN(5) == 0, rng.IntN(10) == 0)
				case r < 33:
					f.Err = badErr
				case r < 34:
					f.ReadErr = readErr
				case r < 36:
					f.NotRegular = true
				case r < 38:
					continue // written again, as it was
				default:
					delete(files, name)
					continue
				}
				files[name] = f
			}
			seq++
			if rng.IntN(30) == 0 {
				seq++ // a snapshot the diff never saw
			}
			s := types.Snapshot{Time: now, Seq: seq, Relist: rng.IntN(8) == 0, Path: "/m", Watch: types.WatchStatus{Up: rng.IntN(30) > 0}}
			if !s.Watch.Up {
				s.Watch.Err = errors.New("inotify: no space left on device")
			}
			switch rng.IntN(60) {
			case 0:
				s.PathErr = fs.ErrNotExist
			case 1:
				s.PathErr = fs.ErrPermission
			}
			if !s.Relist && rng.IntN(20) > 0 {
				s.Changed = []string{}
				if rng.IntN(6) == 0 {
					changed[names[rng.IntN(len(names))]] = true // a name that did not change
				}
				s.Changed = slices.Sorted(maps.Keys(changed))
			}
			for _, n := range names {
				if f, ok := files[n]; ok {
					s.Files = append(s.Files, f)
				}
			}

			dry := &computation{snap: s, now: now, opts: testOpts.withDefaults(), next: fast.cloneSharingPods(),
				livePending: map[string]bool{}, liveProblem: map[string]bool{}}
			// The port looks at the named files' problems alone; its
			// changes are counted once the step is computed.
			_, portIncremental := dry.incrementalPlan(fast.base)

			fullOpts := testOpts
			fullOpts.fullOnly = true
			chFull, nextFull, recFull := Compute(full, s, now, fullOpts)
			chFast, nextFast, recFast := Compute(fast, s, now, testOpts)
			chAdv, recAdv := Advance(&adv, s, now, testOpts)
			if portIncremental {
				incSteps++
				for _, ch := range chFast {
					if ch.Op != "" {
						incChanges++
					} else {
						incProblems++
					}
				}
			}
			if !reflect.DeepEqual(chFull, chFast) || !recFull.Equal(recFast) || !sameState(nextFull, nextFast) {
				t.Fatalf("seed %d step %d: full and fast paths differ\nfull: %s recheck %v\nfast: %s recheck %v\nfull state %+v\nfast state %+v",
					seed, step, reasons(chFull), recFull, reasons(chFast), recFast, nextFull, nextFast)
			}
			if !reflect.DeepEqual(chFull, chAdv) || !recFull.Equal(recAdv) || !sameState(nextFull, unowned(adv)) {
				t.Fatalf("seed %d step %d: Compute and Advance differ\nCompute: %s recheck %v\nAdvance: %s recheck %v\nCompute state %+v\nAdvance state %+v",
					seed, step, reasons(chFull), recFull, reasons(chAdv), recAdv, nextFull, adv)
			}
			if rng.IntN(5) == 0 {
				sh := adv.Share()
				shared = append(shared, frozen{sh, deepCopy(sh)})
			}
			for i, f := range shared {
				if !sameState(f.shared, f.copy) {
					t.Fatalf("seed %d step %d: the State shared %d steps ago changed\nnow %+v\nwas %+v", seed, step, len(shared)-i, f.shared, f.copy)
				}
			}
			full, fast = nextFull, nextFast
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
	}
	// The comparison proves something only if the incremental step ran
	// often. It cannot run from a file turning invalid, unreadable or
	// another pod's while it holds a pod until the next relist (the kubelet
	// runs that pod on), which these random folders do often.
	all := int(seeds) * steps
	if incSteps < all/8 || incChanges < all/8 || incProblems < all/50 {
		t.Fatalf("the incremental step ran in %d steps of %d, with %d ADD/UPDATEs and %d problems", incSteps, all, incChanges, incProblems)
	}
	t.Logf("incremental step taken in %d of %d steps, with %d ADD/UPDATEs and %d problems", incSteps, all, incChanges, incProblems)
}

// unowned is s as Compute would return it: whether Advance may change it in
// place is no part of what it says.
func unowned(s State) State {
	s.owned = false
	return s
}

func deepCopy(s State) State {
	s.Pods = maps.Clone(s.Pods)
	s.Pending = maps.Clone(s.Pending)
	s.Reported = maps.Clone(s.Reported)
	return s
}
