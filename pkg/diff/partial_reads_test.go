package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A writer that writes the new version through one open file in two
// chunks, the first ending in a valid pod of another image. The kubelet
// reads the file on each write event: it may restart the pod to the half
// and again to the whole, or, reading the first event late, only to the
// whole. podwatch must never claim the half's restart as certain, and
// must say the whole may come after one more when it read the half but
// never published it.
func TestChunkedWriteIsARace(t *testing.T) {
	const skip = "the kubelet may read only the whole and skip this restart"
	v1f := valid("web.yaml", pod("web", "img:1"), t0)
	wrote := []types.WatchEvent{{Name: "web.yaml"}}
	open := func(image string, ms int) types.File {
		f := valid("web.yaml", pod("web", image), saveAt(ms))
		f.Complete = false
		return f
	}
	start := func(t *testing.T) *sedSteps {
		q := &sedSteps{t: t}
		if chs, _ := q.at(t0, true, nil, v1f); podOps(chs) != "ADD web.yaml" {
			t.Fatalf("first list: %q", podOps(chs))
		}
		return q
	}

	t.Run("slow: the half published", func(t *testing.T) {
		q := start(t)
		half := open("img:2", 0)
		chs, recheck := q.at(saveAt(0), false, wrote, half)
		chs = append(chs, q.rest(saveAt(0), recheck, half)...)
		// The port says the half at once, the kubelet having read
		// it at its event, whole or not: a restart it may skip.
		if podOps(chs) != "UPDATE web.yaml" {
			t.Fatalf("the half: %q, want an UPDATE", podOps(chs))
		}
		checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtWatch, skip: true})
		whole := valid("web.yaml", pod("web", "img:22"), saveAt(2000))
		chs, _ = q.at(saveAt(2000), false, wrote, whole)
		m := updateMessage(chs)
		if podOps(chs) != "UPDATE web.yaml" || strings.Contains(m, "may restart") || strings.Contains(m, skip) {
			t.Fatalf("the whole: %q %q, want one certain UPDATE: the half's own said it may be skipped", podOps(chs), m)
		}
	})

	t.Run("fast: the half read, never published", func(t *testing.T) {
		q := start(t)
		half := open("img:2", 0)
		whole := valid("web.yaml", pod("web", "img:22"), saveAt(30))
		// The port says the half at once, as one the kubelet may
		// skip, and the whole after it as certain: the claims cover
		// the half run first, and only the whole.
		chs, _ := q.at(saveAt(0), false, wrote, half)
		if podOps(chs) != "UPDATE web.yaml" {
			t.Fatalf("the half: %q, want an UPDATE", podOps(chs))
		}
		checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtWatch, skip: true})
		chs, recheck := q.at(saveAt(30), false, wrote, whole)
		chs = append(chs, q.rest(saveAt(30), recheck, whole)...)
		if podOps(chs) != "UPDATE web.yaml" {
			t.Fatalf("the whole: %q, want an UPDATE", podOps(chs))
		}
		checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtWatch})
	})

	t.Run("loaded: the half's event folded into the whole's", func(t *testing.T) {
		// podwatch took both writes' events in at once and read only the
		// whole; the kubelet's watch may have read the half between.
		q := start(t)
		whole := valid("web.yaml", pod("web", "img:22"), saveAt(30))
		folded := []types.WatchEvent{{Name: "web.yaml", Folded: 1}}
		chs, recheck := q.at(saveAt(30), false, folded, whole)
		chs = append(chs, q.rest(saveAt(30), recheck, whole)...)
		m := updateMessage(chs)
		if podOps(chs) != "UPDATE web.yaml" {
			t.Fatalf("the whole: %q %q, want one UPDATE saying the kubelet may have run the half first", podOps(chs), m)
		}
		checkClaim(t, opChange(t, chs, types.OpUpdate), claimWant{op: types.OpUpdate, at: types.ClaimAtWatch, max: 1})
		// The truncating open's event not merged with the first write's:
		// the empty file is a version too, for all podwatch can tell.
		q = start(t)
		folded[0].Folded = 2
		chs, recheck = q.at(saveAt(30), false, folded, whole)
		chs = append(chs, q.rest(saveAt(30), recheck, whole)...)
		checkClaim(t, opChange(t, chs, types.OpUpdate), claimWant{op: types.OpUpdate, at: types.ClaimAtWatch, max: 2})
	})

	t.Run("written whole, closed later", func(t *testing.T) {
		// The one write event's read got the whole: nothing on the way.
		q := start(t)
		v2 := open("img:2", 0)
		// The port says it at once, a restart the kubelet may skip
		// (its read may have found a part); the close adds nothing.
		chs, _ := q.at(saveAt(0), false, wrote, v2)
		if podOps(chs) != "UPDATE web.yaml" {
			t.Fatalf("written, still open: %q, want an UPDATE", podOps(chs))
		}
		checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtWatch, skip: true})
		closed := v2
		closed.Complete = true
		if chs, _ = q.at(saveAt(30), false, []types.WatchEvent{}, closed); podOps(chs) != "" {
			t.Fatalf("closed: %q, want nothing more", podOps(chs))
		}
	})

	t.Run("written and closed at once", func(t *testing.T) {
		q := start(t)
		v2 := valid("web.yaml", pod("web", "img:2"), saveAt(0))
		chs, _ := q.at(saveAt(0), false, wrote, v2)
		if m := updateMessage(chs); podOps(chs) != "UPDATE web.yaml" || strings.Contains(m, "may") {
			t.Fatalf("an ordinary write: %q %q, want one certain UPDATE", podOps(chs), m)
		}
	})
}

// podwatch's own relist may be what reads the half (its events then say
// nothing): the UPDATE from a file still open is one the kubelet may skip
// all the same.
func TestChunkedHalfReadByARelist(t *testing.T) {
	v1f := valid("web.yaml", pod("web", "img:1"), t0)
	q := &sedSteps{t: t}
	q.at(t0, true, nil)
	// Written since podwatch watches: its events were seen.
	if chs, _ := q.at(t0, false, []types.WatchEvent{evWrote("web.yaml")}, v1f); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("the first write: %q", podOps(chs))
	}
	at := t0.Add(time.Minute)
	half := valid("web.yaml", pod("web", "img:2"), at)
	half.Complete = false
	chs, recheck := q.at(at, true, nil, half)
	chs = append(chs, q.rest(at, recheck, half)...)
	if podOps(chs) != "UPDATE web.yaml" || !chs[len(chs)-1].MaySkip {
		t.Fatalf("the half at a relist: %q %q, want an UPDATE the kubelet may skip", podOps(chs), updateMessage(chs))
	}
	// The port dates it as it does a rename its own relist read
	// first (TestRelistBeforeTheRenameEventsSaysTheRace): at the
	// kubelet's relist that list stands for, an estimate. That relist
	// may have read the file mid-write and not decoded it:
	// extractFromDir leaves it out, listConfig sends the empty list
	// and keeps the store, and podStorage.merge takes every update as
	// the source's whole set, so it removes the pod. The next read
	// that decodes (the writer's next event, or the next relist)
	// starts it again: one stop and start may follow.
	want := claimWant{op: types.OpUpdate, at: types.ClaimAtRelist, skip: true, after: 1, estimate: true}
	checkClaim(t, opChange(t, chs, types.OpUpdate), want)
}

// After a restart the first list reads the manifest as it was changed
// while podwatch was down, with no watch event to say how it was written:
// its UPDATE is certain, not a part the kubelet may skip.
func TestChangedWhileDownIsNoHalf(t *testing.T) {
	q := &sedSteps{t: t}
	if chs, _ := q.at(t0, true, nil, valid("web.yaml", pod("web", "img:1"), t0)); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("first list: %q", podOps(chs))
	}
	q.st.port, q.st.base = nil, nil // what a restart keeps is the published state alone
	at := t0.Add(time.Minute)
	v2 := valid("web.yaml", pod("web", "img:2"), at)
	v2.Complete = false
	chs, recheck := q.at(at, true, nil, v2)
	chs = append(chs, q.rest(at, recheck, v2)...)
	if m := updateMessage(chs); podOps(chs) != "UPDATE web.yaml" || strings.Contains(m, "skip this restart") || strings.Contains(m, "open for writing") {
		t.Fatalf("changed while down: %q %q, want a certain UPDATE", podOps(chs), m)
	}
}
