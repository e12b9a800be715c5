package diff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// TestPlainPathMatchesFull drives random folders through Compute twice,
// with and without the plain fast path, and requires the same changes,
// state and recheck time at every step.
func TestPlainPathMatchesFull(t *testing.T) {
	names := []string{"a.yaml", "b.yaml", "c.yaml", "c.yaml.bak", "d.yaml", "e.yaml"}
	keys := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7"}
	images := []string{"img:1", "img:2"}
	pods := podVariants{}
	badErr := errors.New("spec.containers[0].image: Required value")
	readErr := errors.New("permission denied")
	plainSteps, plainChanges := 0, 0
	for seed := range uint64(1500) {
		rng := rand.New(rand.NewPCG(seed, 7))
		now := t0
		files := map[string]types.File{}
		full, fast := State{}, State{}
		for step := range 40 {
			// Mostly small edits, as a real folder sees.
			for range 1 + rng.IntN(2) {
				name := names[rng.IntN(len(names))]
				f := types.File{Name: name, Path: "/m/" + name, ChangedAt: now.Add(-time.Duration(rng.IntN(3)) * time.Second), Complete: rng.IntN(3) > 0}
				switch r := rng.IntN(20); {
				case r < 12:
					f.Pod = pods.get(keys[rng.IntN(len(keys))], images[rng.IntN(len(images))], rng.IntN(4) == 0, rng.IntN(4) == 0, false)
				case r < 14:
					f.Err = badErr
				case r < 15:
					f.ReadErr = readErr
				case r < 16:
					f.NotRegular = true
				default:
					delete(files, name)
					continue
				}
				files[name] = f
			}
			s := types.Snapshot{Time: now, Relist: rng.IntN(5) == 0, Path: "/m", Watch: types.WatchStatus{Up: rng.IntN(10) > 0}}
			if !s.Watch.Up {
				s.Watch.Err = errors.New("inotify: no space left on device")
			}
			for _, n := range names {
				if f, ok := files[n]; ok {
					s.Files = append(s.Files, &f)
				}
			}
			fullOpts := testOpts
			fullOpts.fullOnly = true
			chFull, nextFull, recFull := Compute(full, s, now, fullOpts)
			chFast, nextFast, recFast := Compute(fast, s, now, testOpts)
			if !reflect.DeepEqual(chFull, chFast) || !recFull.Equal(recFast) || !sameState(nextFull, nextFast) {
				t.Fatalf("seed %d step %d: paths differ\nfull: %s recheck %v\nfast: %s recheck %v\nfull state %+v\nfast state %+v",
					seed, step, reasons(chFull), recFull, reasons(chFast), recFast, nextFull, nextFast)
			}
			c := &computation{snap: s, opts: testOpts.withDefaults(), next: full}
			c.takeIn(full.kubelet, false)
			if _, ok := c.plainPlan(); ok {
				plainSteps++
				for _, ch := range chFast {
					if ch.Op != "" {
						plainChanges++
					}
				}
			}
			full, fast = nextFull, nextFast
			now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		}
	}
	// The comparison proves something only if the fast path ran often. It
	// cannot run from a file turning invalid, unreadable or another pod's
	// while it holds a pod until the next relist (the kubelet runs that pod
	// on), which these random folders do often.
	if plainSteps < 4000 || plainChanges < 2500 {
		t.Fatalf("the plain path applied to %d steps of 60,000, with %d ADD/UPDATEs", plainSteps, plainChanges)
	}
	t.Logf("plain path taken in %d of 60,000 steps, with %d ADD/UPDATEs", plainSteps, plainChanges)
}

// podVariants hands out one *types.Pod per variant (a key, an image, a
// pinned uid, a restyle, ignored content), so that equal variants share a
// pointer as the source's unchanged files do.
type podVariants map[string]*types.Pod

func (vs podVariants) get(key, image string, uid, restyle, ignored bool) *types.Pod {
	id := fmt.Sprint(key, image, uid, restyle, ignored)
	if vs[id] == nil {
		p := pod(key, image, func(p *v1.Pod) {
			if uid {
				p.UID = ktypes.UID("u-" + key)
			}
		})
		if restyle {
			p = restyled(p)
		}
		if ignored {
			p.Ignored = []types.Ignored{{Line: 3, What: `unknown field "spec.foo"`}}
		}
		vs[id] = p
	}
	return vs[id]
}

func sameState(a, b State) bool {
	norm := func(s State) State {
		if len(s.Pods) == 0 {
			s.Pods = nil
		}
		if len(s.Pending) == 0 {
			s.Pending = nil
		}
		if len(s.Reported) == 0 {
			s.Reported = nil
		}
		return s
	}
	return equalEmpty(reflect.ValueOf(norm(a)), reflect.ValueOf(norm(b)))
}

// equalEmpty is reflect.DeepEqual but for a nil slice or map, which
// equals an empty one: a state copied for Compute and one kept in place
// by Advance may hold either, which no step tells apart.
func equalEmpty(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || a.Pointer() == b.Pointer() {
			return a.IsNil() == b.IsNil()
		}
		return equalEmpty(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalEmpty(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalEmpty(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !equalEmpty(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalEmpty(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil()
	}
	return a.Equal(b)
}
