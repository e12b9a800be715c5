package diff

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// goneAfterRelist replays what a loaded CI run showed: while web.yaml.bak
// wins, web.yaml is deleted 40 ms after a relist of the kubelet's opened
// the folder, and that relist is taken in a moment later, after the
// watch's going; listed is what the detector says the folder held at that
// open. It returns the ops of the going's step, of the take-in, and of the
// take-in of the next relist, which opened the folder without web.yaml.
func goneAfterRelist(t *testing.T, listed []string) (gone, takeIn, next []types.Change) {
	t.Helper()
	web := pod("web", "img:1")
	bak := pod("web", "img:bak")
	var st State
	start := t0.Add(-20 * time.Second)
	files := []types.File{valid("web.yaml", web, start), valid("web.yaml.bak", bak, start)}
	snap := types.Snapshot{Time: start, Seq: 1, Relist: true, Path: "/m", Watch: types.WatchStatus{Up: true},
		KubeletRelist: start, Files: ptrs(files)}
	if got := podOps(advanceAll(&st, snap, start)); got != "ADD web.yaml.bak" {
		t.Fatalf("first list: %q", got)
	}
	at := t0 // the relist's folder open
	deleted := at.Add(40 * time.Millisecond)
	snap = types.Snapshot{Time: deleted, Seq: 2, Path: "/m", Watch: types.WatchStatus{Up: true},
		KubeletRelist: start, Files: ptrs(files[1:]),
		Changed: []string{"web.yaml"}, Events: []types.WatchEvent{{Name: "web.yaml", Gone: true}}}
	gone = advanceAll(&st, snap, deleted)
	snap.KubeletRelist, snap.KubeletRelistRead.Listed = at, listed
	takeIn = advanceAll(&st, snap, at.Add(relistLagForTest))
	after := at.Add(20 * time.Second)
	snap.KubeletRelist, snap.KubeletRelistRead.Listed = after, []string{"web.yaml.bak"}
	next = advanceAll(&st, snap, after.Add(relistLagForTest))
	return gone, takeIn, next
}

// The relist read both files; the going, taken in after it, dropped the
// pod again: it starts at the next relist, not at this one.
func TestGoingAfterTheRelistsOpenStandsOverIt(t *testing.T) {
	gone, takeIn, next := goneAfterRelist(t, []string{"web.yaml", "web.yaml.bak"})
	stoppedUntilNextRelist(t, gone, takeIn, next, "REMOVE web.yaml", "ADD web.yaml.bak")
	if msg := removeMessage(gone); !strings.Contains(msg, "its next relist starts it again from web.yaml.bak") {
		t.Errorf("REMOVE message %q: want it to say the next relist starts the pod again", msg)
	}
}

// stoppedUntilNextRelist checks that the going said remove, the relist
// taken in after it nothing (the kubelet took the going in after that
// relist), and the next relist add.
func stoppedUntilNextRelist(t *testing.T, gone, takeIn, next []types.Change, remove, add string) {
	t.Helper()
	if got := podOps(gone); got != remove {
		t.Fatalf("the going: %q, want %s", got, remove)
	}
	if got := podOps(takeIn); got != "" {
		t.Errorf("the relist that opened the folder before the going: %q, want nothing", got)
	}
	if got := podOps(next); got != add {
		t.Errorf("the next relist: %q, want %s", got, add)
	}
}

// The folder no longer held web.yaml at the relist's open: the going came
// first, and the relist starts the pod from the .bak.
func TestGoingBeforeTheRelistsOpen(t *testing.T) {
	for _, listed := range [][]string{{"web.yaml.bak"}, nil} {
		_, takeIn, next := goneAfterRelist(t, listed)
		if got := podOps(takeIn); got != "ADD web.yaml.bak" {
			t.Errorf("listed %q: the relist after the going: %q, want ADD web.yaml.bak", listed, got)
		}
		if got := podOps(next); got != "" {
			t.Errorf("listed %q: the next relist: %q, want nothing", listed, got)
		}
	}
}

// A manifest created just after a relist opened the folder, read by
// podwatch first empty (os.WriteFile creates it so) and then whole, while
// the detector read the relist late, dating it between the two reads (a
// loaded local go: a REMOVE "at its relist" 20 s before the kubelet's).
// The folder did not hold the file at the open, so the relist did not
// read it, empty or not: the pod the watch started runs on.
func TestFileCreatedAfterTheRelistsOpenIsNotReadByIt(t *testing.T) {
	web, other := pod("web", "img:1"), pod("other", "img:1")
	var st State
	start := t0.Add(-20 * time.Second)
	files := []types.File{valid("other.yaml", other, start)}
	snap := types.Snapshot{Time: start, Seq: 1, Relist: true, Path: "/m", Watch: types.WatchStatus{Up: true},
		KubeletRelist: start, Files: ptrs(files)}
	if got := podOps(advanceAll(&st, snap, start)); got != "ADD other.yaml" {
		t.Fatalf("first list: %q", got)
	}
	step := func(seq uint64, f types.File) []types.Change {
		t.Helper()
		snap = types.Snapshot{Time: f.ChangedAt, Seq: seq, Path: "/m", Watch: types.WatchStatus{Up: true},
			KubeletRelist: start, Files: ptrs([]types.File{files[0], f}), Changed: []string{f.Name}, Events: []types.WatchEvent{{Name: f.Name}}}
		return advanceAll(&st, snap, f.ChangedAt.Add(time.Second))
	}
	empty := types.File{Name: "web.yaml", Path: "/m/web.yaml", Err: errors.New("kind: Required value"), ChangedAt: t0.Add(5 * time.Millisecond)}
	step(2, empty)
	if got := podOps(step(3, valid("web.yaml", web, t0.Add(8*time.Millisecond)))); got != "ADD web.yaml" {
		t.Fatalf("the new file, whole: %q, want ADD web.yaml", got)
	}
	at := t0.Add(6 * time.Millisecond) // the relist, dated between podwatch's two reads
	snap.KubeletRelist, snap.KubeletRelistRead.Listed = at, []string{"other.yaml"}
	if got := podOps(advanceAll(&st, snap, at.Add(relistLagForTest))); got != "" {
		t.Errorf("the relist that opened the folder before web.yaml was created: %q, want nothing", got)
	}
	next := at.Add(20 * time.Second)
	snap.KubeletRelist, snap.KubeletRelistRead.Listed = next, []string{"other.yaml", "web.yaml"}
	if got := podOps(advanceAll(&st, snap, next.Add(relistLagForTest))); got != "" {
		t.Errorf("the next relist: %q, want nothing", got)
	}
}

// vimSaveAfterRelist replays vim saving web.yaml 70 ms after a relist of
// the kubelet's opened the folder, with podwatch reading the backup
// before it went: web.yaml renamed to web.yaml~, the new content written
// to web.yaml, web.yaml~ deleted. The relist is dated at, came is what the
// detector saw come after its open, and the backup was first read at
// bornAt. It returns the ops of the backup's going, of the take-in, and
// of the take-in of the next relist.
func vimSaveAfterRelist(t *testing.T, at, bornAt time.Time, came []string) (gone, takeIn, next []types.Change) {
	t.Helper()
	old, saved := pod("web", "img:1"), pod("web", "img:2")
	var st State
	start := t0.Add(-20 * time.Second)
	snap := types.Snapshot{Time: start, Seq: 1, Relist: true, Path: "/m", Watch: types.WatchStatus{Up: true},
		KubeletRelist: start, Files: ptrs([]types.File{valid("web.yaml", old, start)})}
	if got := podOps(advanceAll(&st, snap, start)); got != "ADD web.yaml" {
		t.Fatalf("first list: %q", got)
	}
	backup := valid("web.yaml~", old, bornAt)
	written := valid("web.yaml", saved, bornAt.Add(time.Millisecond))
	snap = types.Snapshot{Time: written.ChangedAt, Seq: 2, Path: "/m", Watch: types.WatchStatus{Up: true},
		KubeletRelist: start, Files: ptrs([]types.File{written, backup}),
		Changed: []string{"web.yaml", "web.yaml~"},
		Events:  []types.WatchEvent{{Name: "web.yaml", Gone: true}, {Name: "web.yaml~"}, {Name: "web.yaml"}}}
	advanceAll(&st, snap, written.ChangedAt)
	deleted := written.ChangedAt.Add(time.Millisecond)
	snap = types.Snapshot{Time: deleted, Seq: 3, Path: "/m", Watch: types.WatchStatus{Up: true},
		KubeletRelist: start, Files: ptrs([]types.File{written}),
		Changed: []string{"web.yaml~"}, Events: []types.WatchEvent{{Name: "web.yaml~", Gone: true}}}
	gone = advanceAll(&st, snap, deleted)
	snap.KubeletRelist, snap.KubeletRelistRead.Listed, snap.KubeletRelistRead.Came = at, []string{"web.yaml"}, came
	takeIn = advanceAll(&st, snap, at.Add(relistLagForTest))
	after := at.Add(20 * time.Second)
	snap.KubeletRelist, snap.KubeletRelistRead.Listed, snap.KubeletRelistRead.Came = after, []string{"web.yaml"}, nil
	next = advanceAll(&st, snap, after.Add(relistLagForTest))
	return gone, takeIn, next
}

// The backup came after the relist's open, by the detector's queue or by
// the clocks: the kubelet takes its going in after the relist, which
// leaves the pod stopped until the next relist.
func TestBackupGoneAfterTheRelistsOpenStandsOverIt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		at, bornAt time.Time
		came       []string
	}{
		// The detector read the relist late, dating its open after
		// podwatch's read of the backup; its queue says the backup came
		// after the open.
		{"detector's queue", t0.Add(100 * time.Millisecond), t0.Add(70 * time.Millisecond), []string{"web.yaml~"}},
		// The backup came after the relist completed: podwatch read it
		// after the relist's open.
		{"clocks", t0, t0.Add(70 * time.Millisecond), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gone, takeIn, next := vimSaveAfterRelist(t, tc.at, tc.bornAt, tc.came)
			stoppedUntilNextRelist(t, gone, takeIn, next, "REMOVE web.yaml~", "ADD web.yaml")
		})
	}
}

// A backup that came and went before the relist's open: the relist
// starts the pod again at once.
func TestBackupGoneBeforeTheRelistsOpen(t *testing.T) {
	_, takeIn, next := vimSaveAfterRelist(t, t0.Add(100*time.Millisecond), t0.Add(70*time.Millisecond), nil)
	if got := podOps(takeIn); got != "ADD web.yaml" {
		t.Errorf("the relist after the save: %q, want ADD web.yaml", got)
	}
	if got := podOps(next); got != "" {
		t.Errorf("the next relist: %q, want nothing", got)
	}
}
