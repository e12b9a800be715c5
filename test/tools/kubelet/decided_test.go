//go:build linux

package kubelet_test

import (
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// What the sync loop was told, as podwatch claims it: a REMOVE and an ADD
// of one config update are a restart under a new UID (UPDATE), and an
// UPDATE line, the pod kept in place under its metadata.uid, is an UPDATE
// too; another pod's lines and the API server's are not the pod's.
func TestDecided(t *testing.T) {
	at := time.Date(2026, 12, 3, 7, 49, 18, 0, time.Local)
	const pod = "judge/p-judge-node"
	line := func(ms int, op, source string, pods ...string) kubelet.SyncLoop {
		return kubelet.SyncLoop{At: at.Add(time.Duration(ms) * time.Millisecond), Op: op, Source: source, Pods: pods}
	}
	s := kubelet.Snapshot{Loops: []kubelet.SyncLoop{
		line(0, "ADD", "file", pod),
		line(200, "UPDATE", "file", pod),
		line(300, "UPDATE", "file", "judge/other-judge-node"),
		line(400, "UPDATE", "api", pod),
		line(5000, "REMOVE", "file", pod),
		line(5001, "ADD", "file", pod),
		line(9000, "REMOVE", "file", pod),
	}}
	ops, removes := decidedAt(s, pod, nil)
	if want := []string{"ADD", "UPDATE", "UPDATE", "REMOVE"}; !slices.Equal(ops, want) {
		t.Errorf("decided %v, want %v", ops, want)
	}
	if len(removes) != 2 || !removes[0].folded || !removes[0].at.Equal(at.Add(5*time.Second)) || removes[1].folded || !removes[1].at.Equal(at.Add(9*time.Second)) {
		t.Errorf("REMOVE lines %+v, want the one read with its ADD as an UPDATE, then the last one", removes)
	}
}

// A busy sync loop logs the REMOVE and the ADD of one update seconds
// apart, and the REMOVE of a relist's drop and the ADD of a fix seconds
// later back to back: where the log has the merges, a REMOVE and an ADD are
// one restart when the file source sent them within a second, whatever
// the lines say.
func TestDecidedByWhenSent(t *testing.T) {
	at := time.Date(2026, 12, 3, 7, 49, 18, 0, time.Local)
	ms := func(n int) time.Time { return at.Add(time.Duration(n) * time.Millisecond) }
	const pod = "judge/p-judge-node"
	line := func(n int, op string) kubelet.SyncLoop {
		return kubelet.SyncLoop{At: ms(n), Op: op, Source: "file", Pods: []string{pod}}
	}
	added := func(ns ...int) []kubelet.Added {
		var out []kubelet.Added
		for _, n := range ns {
			out = append(out, kubelet.Added{At: ms(n), Pod: pod})
		}
		return out
	}
	merges := func(ns ...int) []time.Time {
		var out []time.Time
		for _, n := range ns {
			out = append(out, ms(n))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		loops  []kubelet.SyncLoop
		added  []kubelet.Added
		merges []time.Time
		relist int  // the relist read that decided the REMOVE; -1: none
		drop   bool // that read failed
		want   []string
	}{{
		name:   "one relist's REMOVE and ADD, logged 2.5 s apart",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(5000, "REMOVE"), line(7500, "ADD")},
		added:  added(0, 4900),
		merges: merges(0, 4895),
		relist: 4890,
		drop:   true,
		want:   []string{"ADD", "UPDATE"},
	}, {
		name:   "a relist's read merged seconds later, its file source blocked",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(23000, "REMOVE"), line(23500, "ADD")},
		added:  added(0, 4900),
		merges: merges(0, 4895),
		relist: 2000,
		drop:   true,
		want:   []string{"ADD", "UPDATE"},
	}, {
		name:   "a relist's drop and a fix's ADD 2 s later, logged back to back",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(5500, "REMOVE"), line(5510, "ADD")},
		added:  added(0, 5000),
		merges: merges(0, 3001, 4999),
		relist: 3000,
		drop:   true,
		want:   []string{"ADD", "REMOVE", "ADD"},
	}, {
		name:   "a relist that found no valid file, the store sent again 1 ms later",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(3010, "REMOVE"), line(3020, "ADD")},
		added:  added(0, 3003),
		merges: merges(0, 3001, 3002),
		relist: 3000,
		drop:   true,
		want:   []string{"ADD", "REMOVE", "ADD"},
	}, {
		name:   "on the watch: sent no later than the ADD",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(5000, "REMOVE"), line(6500, "ADD")},
		added:  added(0, 4990),
		merges: merges(0, 3000, 4985),
		relist: -1,
		want:   []string{"ADD", "UPDATE"},
	}, {
		name:   "a watch write's new UID, a relist read both files before the line",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(6000, "REMOVE"), line(6000, "ADD")},
		added:  added(0, 4000),
		merges: merges(0, 2600, 4000),
		relist: 2500,
		want:   []string{"ADD", "UPDATE"},
	}, {
		name:   "without the merges in the log, the lines decide",
		loops:  []kubelet.SyncLoop{line(0, "ADD"), line(5000, "REMOVE"), line(7500, "ADD")},
		relist: 4890,
		want:   []string{"ADD", "REMOVE", "ADD"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := kubelet.Snapshot{Loops: tc.loops, Added: tc.added, Merges: tc.merges}
			calls := 0
			decide := func(line time.Time) decision {
				calls++
				if tc.relist < 0 {
					return decision{at: line}
				}
				return decision{at: ms(tc.relist), byRelist: true, drop: tc.drop}
			}
			ops, removes := decidedAt(s, pod, decide)
			if !slices.Equal(ops, tc.want) {
				t.Errorf("decided %v, want %v", ops, tc.want)
			}
			if calls != 1 || len(removes) != 1 {
				t.Errorf("decide called %d times for %d REMOVE lines, want once for the one", calls, len(removes))
			}
		})
	}
}

// shadowed-edited as a loaded kubelet played it: while the .bak wins, a
// relist reads the manifest truncated (os.WriteFile empties it first) and
// the .bak whole, so the pod stays; the watch then reads the new content
// and restarts the pod with it, and the next relist brings the .bak back.
// A sync loop 5 s behind logs both restarts late. The relist's failed read
// decided nothing: each REMOVE and its ADD are one restart.
func TestDecidedKeepsAPodTheBakDefines(t *testing.T) {
	at := time.Date(2026, 12, 4, 1, 0, 0, 0, time.Local)
	ms := func(n int) time.Time { return at.Add(time.Duration(n) * time.Millisecond) }
	const pod, dir = "judge/p-judge-node", "/d/manifests"
	names := []string{"p.yaml", "p.yaml.bak"}
	line := func(n int, op string) kubelet.SyncLoop {
		return kubelet.SyncLoop{At: ms(n), Op: op, Source: "file", Pods: []string{pod}}
	}
	s := kubelet.Snapshot{
		Loops:   []kubelet.SyncLoop{line(0, "ADD"), line(15000, "REMOVE"), line(15001, "ADD"), line(16000, "REMOVE"), line(16001, "ADD")},
		Added:   []kubelet.Added{{At: ms(0), Pod: pod}, {At: ms(10181), Pod: pod}, {At: ms(11001), Pod: pod}},
		Merges:  []time.Time{ms(0), ms(10004), ms(10181), ms(11001)},
		Relists: []kubelet.Relist{{Began: ms(10000), Ended: ms(10003)}, {Began: ms(11000), Ended: ms(11001)}},
		Reads: []kubelet.Read{
			{At: ms(10001), Path: dir + "/p.yaml", Relist: true, Failed: true},
			{At: ms(10002), Path: dir + "/p.yaml.bak", Relist: true},
			{At: ms(10180), Path: dir + "/p.yaml"},
			{At: ms(11000), Path: dir + "/p.yaml", Relist: true},
			{At: ms(11001), Path: dir + "/p.yaml.bak", Relist: true},
		},
	}
	steps := []folderStep{{at: ms(-5000), verb: "write"}, {at: ms(10000), verb: "write"}}
	decide := decider(steps, relistDrops(s.Reads, s.Relists, dir, names), s.Reads, dir, names)
	if ops, _ := decidedAt(s, pod, decide); !slices.Equal(ops, []string{"ADD", "UPDATE", "UPDATE"}) {
		t.Errorf("decided %v, want ADD and two UPDATEs", ops)
	}
}

// A REMOVE and the ADD after it bring the same pod back when the pod
// workers logged one UID for both and it had started, and replace it when
// they logged two, whatever sandboxes started late between: a loaded
// kubelet's sandbox of an earlier ADD may start after its pod was
// replaced, and one of the same UID start again later. One UID removed
// and added again before it started stopped nothing (measured: a relist
// and vim's rename and write taken in back to back).
func TestDecidedByTheLinesUIDs(t *testing.T) {
	at := time.Date(2026, 12, 4, 2, 30, 0, 0, time.Local)
	ms := func(n int) time.Time { return at.Add(time.Duration(n) * time.Millisecond) }
	const pod = "judge/p-judge-node"
	lines := []struct {
		ms      int
		op, uid string
	}{{0, "ADD", "bak"}, {100, "REMOVE", "bak"}, {101, "ADD", "new"}, {200, "REMOVE", "new"}, {201, "ADD", "bak"}, {400, "REMOVE", "bak"}, {401, "ADD", "bak"}, {500, "REMOVE", "bak"}, {501, "ADD", "bak"}}
	var s kubelet.Snapshot
	for i, l := range lines {
		s.Loops = append(s.Loops, kubelet.SyncLoop{At: ms(l.ms), Op: l.op, Source: "file", Pods: []string{pod}})
		s.Handled = append(s.Handled, kubelet.Handled{Loop: i, Pod: pod, UID: l.uid})
	}
	sandbox := func(n int, op kubelet.ActionOp, id string) kubelet.Action {
		return kubelet.Action{At: ms(n), Op: op, Pod: kubelet.Pod{Namespace: "judge", Name: "p-judge-node", UID: "bak"}, Sandbox: id}
	}
	// The first ADD's sandbox starts late, after its pod was replaced, and
	// the bak pod gets one again after the third ADD.
	s.Actions = []kubelet.Action{sandbox(150, kubelet.ActionStart, "s1"), sandbox(180, kubelet.ActionStop, "s1"), sandbox(300, kubelet.ActionStart, "s2")}
	if got, want := decided(s, pod, nil), []string{"ADD", "UPDATE", "UPDATE", "REMOVE", "ADD", "UPDATE"}; !slices.Equal(got, want) {
		t.Errorf("by the lines' UIDs: decided %v, want %v", got, want)
	}
	// Without them the sandboxes pair the late one with the next: the
	// judge's reading before the pod workers' lines were logged.
	s.Handled = nil
	if got, want := decided(s, pod, nil), []string{"ADD", "UPDATE", "REMOVE", "ADD", "UPDATE", "UPDATE"}; !slices.Equal(got, want) {
		t.Errorf("by the sandboxes: decided %v, want %v", got, want)
	}
}
