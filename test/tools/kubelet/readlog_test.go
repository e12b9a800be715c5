//go:build linux

package kubelet

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// The kubelet's log tells a full list from a watch read by the relist
// clock folders around it; a read the file source could not make a pod of
// by its failure line, even with another goroutine's line between; and a
// list that found the folder missing by its error line, which must name
// the kubelet's own folder (with or without the trailing slash its config
// may give) to count.
func TestReadLogRelists(t *testing.T) {
	k := &Kubelet{Manifests: "/d/manifests", RelistClock: "/d/manifests/!relist-clock", RelistEnd: "/d/manifests/~relist-end", hist: newHistory()}
	log := strings.Join([]string{
		`E0102 15:04:05.000000 1 file.go:174] "Provided manifest path is a directory, not recursing into manifest path" path="/d/manifests/!relist-clock"`,
		`I0102 15:04:05.100000 1 file.go:200] "Reading config file" path="/d/manifests/a.yaml"`,
		`I0102 15:04:05.110000 1 file.go:200] "Reading config file" path="/d/manifests/c.yaml"`,
		`I0102 15:04:05.110050 1 kubelet.go:2760] "SyncLoop ADD" source="file" pods=["ns/x"]`,
		`E0102 15:04:05.110100 1 file.go:186] "Could not process manifest file" err="/d/manifests/c.yaml: couldn't parse as pod(yaml: line 7: did not find expected ',' or '}'), please check config file" path="/d/manifests/c.yaml"`,
		`I0102 15:04:05.120000 1 file.go:200] "Reading config file" path="/d/manifests/d.yaml"`,
		`E0102 15:04:05.120100 1 file.go:186] "Could not process manifest file" err="/d/manifests/d.yaml: open /d/manifests/d.yaml: no such file or directory" path="/d/manifests/d.yaml"`,
		`E0102 15:04:05.200000 1 file.go:174] "Provided manifest path is a directory, not recursing into manifest path" path="/d/manifests/~relist-end"`,
		`I0102 15:04:06.000000 1 file.go:200] "Reading config file" path="/d/manifests/b.yaml"`,
		`E0102 15:04:07.000000 1 file.go:101] "Unable to read config path" err="path does not exist, ignoring" path="/d/manifests"`,
		`E0102 15:04:08.000000 1 file.go:101] "Unable to read config path" err="path does not exist, ignoring" path="/elsewhere"`,
		`E0102 15:04:09.000000 1 file.go:101] "Unable to read config path" err="path does not exist, ignoring" path="/d/manifests/"`,
	}, "\n") + "\n"
	k.readLog(strings.NewReader(log), io.Discard)
	s := k.hist.Snapshot()
	if len(s.Relists) != 3 || s.Relists[0].Missing || !s.Relists[1].Missing || !s.Relists[2].Missing {
		t.Fatalf("relists = %+v, want one full list, then two that found /d/manifests missing", s.Relists)
	}
	if m := s.Relists[1]; m.Ended != m.Began || m.Began.Second() != 7 {
		t.Errorf("missing relist = %+v, want it begun and ended at 15:04:07", m)
	}
	if r, ok := s.RelistAfter(s.Relists[0].Ended); !ok || !r.Missing {
		t.Errorf("RelistAfter the full list = %+v, %v; want the missing one", r, ok)
	}
	if !s.RelistRead("/d/manifests/a.yaml") || s.WatchRead("/d/manifests/a.yaml") {
		t.Errorf("a.yaml was read by the relist only: %+v", s.Reads)
	}
	var failed []string
	for _, r := range s.Reads {
		if r.Failed {
			failed = append(failed, r.Path)
		}
	}
	if !slices.Equal(failed, []string{"/d/manifests/c.yaml"}) {
		t.Errorf("reads the relist could not make a pod of = %q, want c.yaml's only: %+v", failed, s.Reads)
	}
	if s.RelistRead("/d/manifests/b.yaml") || !s.WatchRead("/d/manifests/b.yaml") {
		t.Errorf("b.yaml was read on a watch event only: %+v", s.Reads)
	}
}

// A pod the file source's update adds is dated by the merge, which the
// sync loop's ADD line may follow by seconds; the API server's merges add
// pods of the same name (mirror pods) that are not the file source's.
func TestReadLogAdded(t *testing.T) {
	k := &Kubelet{Manifests: "/d/manifests", hist: newHistory()}
	log := strings.Join([]string{
		`I0102 15:04:05.000000 1 config.go:230] "Setting pods for source" source="file"`,
		`I0102 15:04:05.000100 1 config.go:330] "Receiving a new pod" pod="ns/a-node"`,
		`I0102 15:04:05.000200 1 config.go:330] "Receiving a new pod" pod="ns/b-node"`,
		`I0102 15:04:06.000000 1 config.go:230] "Setting pods for source" source="api"`,
		`I0102 15:04:06.000100 1 config.go:330] "Receiving a new pod" pod="ns/a-node"`,
		`I0102 15:04:07.000000 1 config.go:230] "Setting pods for source" source="file"`,
		`I0102 15:04:07.000100 1 config.go:330] "Receiving a new pod" pod="ns/a-node"`,
		`I0102 15:04:09.000000 1 kubelet.go:2760] "SyncLoop ADD" source="file" pods=["ns/a-node"]`,
	}, "\n") + "\n"
	k.readLog(strings.NewReader(log), io.Discard)
	s := k.hist.Snapshot()
	var secs []int
	for _, at := range s.AddedAt("ns/a-node") {
		secs = append(secs, at.Second())
	}
	if !slices.Equal(secs, []int{5, 7}) {
		t.Errorf("ns/a-node added at seconds %v, want [5 7]: the file source's merges only", secs)
	}
	if n := len(s.AddedAt("ns/b-node")); n != 1 {
		t.Errorf("ns/b-node added %d times, want 1", n)
	}
	if len(s.Merges) != 2 || s.Merges[0].Second() != 5 || s.Merges[1].Second() != 7 {
		t.Errorf("merges %v, want the file source's two, at :05 and :07", s.Merges)
	}
	if m, ok := s.MergeAfter(s.Merges[0].Add(time.Millisecond)); !ok || !m.Equal(s.Merges[1]) {
		t.Errorf("MergeAfter just after the first = %v, %v; want the second", m, ok)
	}
	if _, ok := s.MergeAfter(s.Merges[1].Add(time.Millisecond)); ok {
		t.Error("a merge after the last one")
	}
}

// The pod workers' lines give each pod of a file source's ADD or REMOVE
// line its UID: the first of them for that pod, with the line's update
// type, after the line. Another update type, another source, or a pod
// worker's own line is not the line's.
func TestReadLogHandled(t *testing.T) {
	k := &Kubelet{Manifests: "/d/manifests", hist: newHistory()}
	log := strings.Join([]string{
		`I0102 15:04:05.000000 1 kubelet.go:2760] "SyncLoop REMOVE" source="file" pods=["ns/a"]`,
		`I0102 15:04:05.000100 1 pod_workers.go:1265] "Processing pod event" pod="ns/a" podUID="u0" updateType="kill"`,
		`I0102 15:04:05.000200 1 pod_workers.go:994] "Notifying pod of pending update" pod="ns/a" podUID="u0" updateType="sync" workType="sync"`,
		`I0102 15:04:05.000300 1 pod_workers.go:895] "Pod is being removed by the kubelet, begin teardown" pod="ns/a" podUID="u1" updateType="kill"`,
		`I0102 15:04:05.000400 1 pod_workers.go:994] "Notifying pod of pending update" pod="ns/a" podUID="u1" updateType="kill" workType="terminating"`,
		`I0102 15:04:05.001000 1 kubelet.go:2760] "SyncLoop ADD" source="file" pods=["ns/a","ns/b"]`,
		`I0102 15:04:05.001100 1 pod_workers.go:796] "Pod is being synced for the first time" pod="ns/b" podUID="u3" updateType="create"`,
		`I0102 15:04:05.001200 1 pod_workers.go:861] "Pod is terminating but has been requested to restart with same UID, will be reconciled later" pod="ns/a" podUID="u1" updateType="create"`,
		`I0102 15:04:05.002000 1 kubelet.go:2760] "SyncLoop ADD" source="api" pods=["ns/b"]`,
		`I0102 15:04:05.002100 1 pod_workers.go:994] "Notifying pod of pending update" pod="ns/b" podUID="u9" updateType="create" workType="sync"`,
		`I0102 15:04:05.003000 1 kubelet.go:2760] "SyncLoop UPDATE" source="file" pods=["ns/b"]`,
		`I0102 15:04:05.003100 1 pod_workers.go:994] "Notifying pod of pending update" pod="ns/b" podUID="u3" updateType="update" workType="sync"`,
		// A REMOVE the sync loop handed no pod worker (its sources not
		// ready): a later kill of the name, housekeeping's of an old
		// sandbox, is not its.
		`I0102 15:04:05.004000 1 kubelet.go:2770] "SyncLoop REMOVE" source="file" pods=["ns/c"]`,
		`I0102 15:04:05.005000 1 kubelet.go:2760] "SyncLoop UPDATE" source="api" pods=["ns/x"]`,
		`I0102 15:04:05.005100 1 pod_workers.go:994] "Notifying pod of pending update" pod="ns/c" podUID="old" updateType="kill" workType="terminating"`,
	}, "\n") + "\n"
	k.readLog(strings.NewReader(log), io.Discard)
	s := k.hist.Snapshot()
	for _, c := range []struct {
		loop      int
		pod, want string
	}{{0, "ns/a", "u1"}, {1, "ns/a", "u1"}, {1, "ns/b", "u3"}, {2, "ns/b", ""}, {3, "ns/b", ""}, {4, "ns/c", ""}} {
		if got := s.LineUID(c.loop, c.pod); got != c.want {
			t.Errorf("line %d (%s %s), pod %s: UID %q, want %q", c.loop, s.Loops[c.loop].Op, s.Loops[c.loop].Source, c.pod, got, c.want)
		}
	}
	if len(s.Handled) != 3 {
		t.Errorf("handled %+v, want the file source's three pods only", s.Handled)
	}
}
