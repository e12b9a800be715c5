package kubelet

import (
	"testing"
	"time"
)

// UIDs is what the suite reads the kubelet's operations from: one entry
// per UID in start order, the first stop counting, a later sandbox of the
// same UID making it run again, and other pods' calls left out.
func TestSnapshotUIDs(t *testing.T) {
	h := newHistory()
	at := time.Unix(0, 0)
	tick := func() time.Time { at = at.Add(time.Second); return at }
	a1 := Pod{Namespace: "ns", Name: "a", UID: "1"}
	a2 := Pod{Namespace: "ns", Name: "a", UID: "2"}
	h.addSandbox(tick(), "s1", a1)
	h.addSandbox(tick(), "s9", Pod{Namespace: "ns", Name: "b", UID: "9"})
	h.sandboxAction(tick(), ActionStop, "s1") // at 3s
	h.sandboxAction(tick(), ActionStop, "s1") // the kubelet stops again on cleanup
	h.sandboxAction(tick(), ActionRemove, "s1")
	h.addSandbox(tick(), "s2", a2) // at 6s
	h.sandboxAction(tick(), ActionStop, "s2")
	h.addSandbox(tick(), "s2b", a2) // the same UID's sandbox recreated

	got := h.Snapshot().UIDs("ns/a")
	if len(got) != 2 || got[0].Pod != a1 || got[1].Pod != a2 {
		t.Fatalf("UIDs = %+v, want a1 then a2", got)
	}
	if got[0].Stopped != time.Unix(3, 0) || got[1].Started != time.Unix(6, 0) || !got[1].Stopped.IsZero() {
		t.Errorf("UIDs = %+v: a1 stopped at its first stop (3s), a2 started at 6s and running again", got)
	}
}
