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
	ops, removes := decidedAt(s, pod)
	if want := []string{"ADD", "UPDATE", "UPDATE", "REMOVE"}; !slices.Equal(ops, want) {
		t.Errorf("decided %v, want %v", ops, want)
	}
	if len(removes) != 2 || !removes[0].folded || !removes[0].at.Equal(at.Add(5*time.Second)) || removes[1].folded || !removes[1].at.Equal(at.Add(9*time.Second)) {
		t.Errorf("REMOVE lines %+v, want the one read with its ADD as an UPDATE, then the last one", removes)
	}
}
