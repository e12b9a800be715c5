package diff

import (
	"errors"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// A REMOVE that a drop on the watch caused waits to settle; in a busy
// folder another file's snapshot comes first. It must say what the same
// save says alone: a judge run once printed "web.yaml now defines pod
// <its own key> … at its relist" for vim's save, as the other snapshot had
// cleared the drop that explained it.
func TestWaitingRemoveKeepsItsDropAcrossAnotherFilesSnapshot(t *testing.T) {
	other := valid("other.yaml", pod("other", "img:1"), t0)
	bak := valid("web.yaml~", pod("web", "img:1"), saveAt(1))
	half := types.File{Name: "web.yaml", Err: errors.New(`kind: Required value`), ChangedAt: saveAt(25)}
	v2 := valid("web.yaml", pod("web", "img:2"), saveAt(45))
	save := func(t *testing.T, busy bool) types.Change {
		t.Helper()
		q := &sedSteps{t: t}
		q.at(t0, true, nil, other, valid("web.yaml", pod("web", "img:1"), t0))
		q.at(saveAt(0), false, []types.WatchEvent{evGone("web.yaml"), evWrote("web.yaml~")}, other, bak)
		q.at(saveAt(25), false, []types.WatchEvent{evWrote("web.yaml")}, other, bak, half)
		chs, recheck := q.at(saveAt(60), false, []types.WatchEvent{evWrote("web.yaml"), evGone("web.yaml~")}, other, v2)
		files := []types.File{other, v2}
		if busy {
			files[0] = valid("other.yaml", pod("other", "img:2"), saveAt(80))
			more, re := q.at(saveAt(80), false, []types.WatchEvent{evWrote("other.yaml")}, files...)
			chs, recheck = append(chs, more...), re
		}
		chs = append(chs, q.rest(saveAt(80), recheck, files...)...)
		for _, ch := range chs {
			if ch.Op == types.OpRemove {
				return ch
			}
		}
		t.Fatalf("busy=%v: no REMOVE in %q", busy, podOps(chs))
		return types.Change{}
	}
	alone, busy := save(t, false), save(t, true)
	if busy.Message != alone.Message || busy.File != alone.File {
		t.Errorf("with another file's snapshot between:\n%s: %s\nalone:\n%s: %s", busy.File, busy.Message, alone.File, alone.Message)
	}
	for _, want := range []string{"web.yaml~ was removed, new and gone within", "its next relist starts it again from web.yaml"} {
		if !strings.Contains(busy.Message, want) {
			t.Errorf("REMOVE %q does not say %q", busy.Message, want)
		}
	}
}
