package diff

import (
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// replayPhrase is what an UPDATE says when a relist of the kubelet's
// between the events and its taking them in may stop the pod and start it
// again.
const replayPhrase = "the kubelet may stop the pod and start it again once (a race: a relist of its may read the folder before its watch takes in "

// A manifest renamed is two watch events, the old name's going and the new
// name. A relist of the kubelet's that reads the folder after the rename
// but before its file source takes them in runs the new file's pod first;
// the old name's going then drops it (the pod that name last gave) and the
// new name starts it again. The UPDATE says so, as a race; an edit that
// drops nothing on the way says nothing of it.
func TestKubeletRenameMayReplayOverARelist(t *testing.T) {
	v1f, v2 := valid("", pod("web", "img:1"), t0), valid("", pod("web", "img:2"), t0)

	mv := newStepper(t)
	mv.step(true, map[string]*types.File{"web.yaml": &v1f})
	chs := mv.stepEvents(false, []types.WatchEvent{evGone("web.yaml"), evWrote("x.yaml")}, map[string]*types.File{"web.yaml": nil, "x.yaml": &v1f})
	if got := podOps(chs); got != "UPDATE x.yaml" {
		t.Fatalf("the rename: got %q, want one UPDATE: %v", got, chs)
	}
	// The port claims the rename alone: the real kubelet's runs of
	// a rename agreed with it, the relist's replay never showing.
	checkClaim(t, opChange(t, chs, types.OpUpdate), claimWant{op: types.OpUpdate, at: types.ClaimAtWatch})
	// Said once: the next change has no drop before it.
	chs = mv.stepEvents(false, []types.WatchEvent{evWrote("x.yaml")}, map[string]*types.File{"x.yaml": &v2})
	if m := updateMessage(chs); m == "" || strings.Contains(m, replayPhrase) {
		t.Errorf("an edit after the rename: message %q, want an UPDATE without the race", m)
	}
	checkClaim(t, opChange(t, chs, types.OpUpdate), claimWant{op: types.OpUpdate, at: types.ClaimAtWatch})

	// Deleted and written again in one snapshot: the same two events.
	rw := newStepper(t)
	rw.step(true, map[string]*types.File{"web.yaml": &v1f})
	chs = rw.stepEvents(false, []types.WatchEvent{evGone("web.yaml"), evWrote("web.yaml")}, map[string]*types.File{"web.yaml": &v2})
	checkClaim(t, opChange(t, chs, types.OpUpdate), claimWant{op: types.OpUpdate, at: types.ClaimAtWatch})

	// Written over by a rename (an editor's swap file, sed -i): the
	// manifest's name never goes, so nothing drops the pod.
	over := newStepper(t)
	over.step(true, map[string]*types.File{"web.yaml": &v1f})
	chs = over.stepEvents(false, []types.WatchEvent{evWrote("web.yaml")}, map[string]*types.File{"web.yaml": &v2})
	if m := updateMessage(chs); m == "" || strings.Contains(m, replayPhrase) {
		t.Errorf("written over: message %q, want an UPDATE without the race", m)
	}

	// emacs's save: the drop comes before the backup, and is counted on
	// the way; vim's: the backup's deletion says its own drop.
	emacs := newStepper(t)
	emacs.step(true, map[string]*types.File{"web.yaml": &v1f})
	chs = emacs.stepEvents(false,
		[]types.WatchEvent{evGone("web.yaml"), evWrote("web.yaml~"), evWrote("web.yaml")},
		map[string]*types.File{"web.yaml": &v2, "web.yaml~": &v1f})
	if m := updateMessage(chs); m == "" || strings.Contains(m, replayPhrase) {
		t.Errorf("emacs's save: message %q, want the drop counted on the way only", m)
	}
	vim := newStepper(t)
	vim.step(true, map[string]*types.File{"web.yaml": &v1f})
	chs = vim.stepEvents(false,
		[]types.WatchEvent{evGone("web.yaml"), evWrote("web.yaml~"), evWrote("web.yaml"), evGone("web.yaml~")},
		map[string]*types.File{"web.yaml": &v2})
	if m := updateMessage(chs); m == "" || strings.Contains(m, replayPhrase) {
		t.Errorf("vim's save: message %q, want the backup's drop said alone", m)
	}
}

// A rename whose old name's going comes a snapshot before the new name:
// the drop is still the rename's.
func TestKubeletRenameOverTwoSnapshotsMayReplay(t *testing.T) {
	q := &sedSteps{t: t}
	if chs, _ := q.at(t0, true, nil, valid("web.yaml", pod("web", "img:1"), t0)); podOps(chs) != "ADD web.yaml" {
		t.Fatalf("first list: %q", podOps(chs))
	}
	if chs, _ := q.at(saveAt(0), false, []types.WatchEvent{evGone("web.yaml")}); len(chs) != 0 {
		t.Fatalf("the old name's going: %q, want the REMOVE held to settle", podOps(chs))
	}
	moved := valid("x.yaml", pod("web", "img:1"), t0)
	chs, recheck := q.at(saveAt(5), false, []types.WatchEvent{evWrote("x.yaml")}, moved)
	chs = append(chs, q.rest(saveAt(5), recheck, moved)...)
	// As in one snapshot: the rename alone.
	if podOps(chs) != "UPDATE x.yaml" {
		t.Fatalf("the new name: %q, want one UPDATE", podOps(chs))
	}
	checkClaim(t, chs[0], claimWant{op: types.OpUpdate, at: types.ClaimAtWatch})
}

// A loaded podwatch's own relist, standing in for the kubelet's, may read
// a renamed manifest before its watch takes the rename's events in (seen
// with the kubelet's file source held up): the relist's UPDATE says the
// same race, as the kubelet's relist may have come between the rename and
// its taking the events in just as well.
func TestRelistBeforeTheRenameEventsSaysTheRace(t *testing.T) {
	v1f := valid("", pod("web", "img:1"), t0)
	mv := newStepper(t)
	mv.step(true, map[string]*types.File{"web.yaml": &v1f})
	chs := mv.step(true, map[string]*types.File{"web.yaml": nil, "x.yaml": &v1f})
	if got := podOps(chs); got != "UPDATE x.yaml" {
		t.Fatalf("the relist after the rename: got %q, want one UPDATE: %v", got, chs)
	}
	// The port claims the rename alone, as on the watch.
	checkClaim(t, opChange(t, chs, types.OpUpdate), claimWant{op: types.OpUpdate, at: types.ClaimAtRelist, estimate: true})
	// The rename's events then come: nothing more to say.
	chs = mv.stepEvents(false, []types.WatchEvent{evGone("web.yaml"), evWrote("x.yaml")}, map[string]*types.File{"x.yaml": &v1f})
	if got := podOps(chs); got != "" {
		t.Errorf("the rename's events after the relist: %q, want nothing", got)
	}
}
