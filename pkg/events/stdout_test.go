package events

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// A problem reported at every relist (20s) for an hour prints one text line
// when it starts, one when its message changes, and then one per repeat
// interval with its count; JSON keeps every occurrence.
func TestTextHoldsBackRepeats(t *testing.T) {
	var js, txt bytes.Buffer
	clk := clocktesting.NewFakeClock(t0)
	jsonSink, err := NewStreamSink(&js, OutputJSON, 0, clk)
	if err != nil {
		t.Fatal(err)
	}
	textSink, err := NewStreamSink(&txt, OutputText, 10*time.Minute, clk)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Host: "node-1"}, clk, nil, []Registration{StreamTo("json", jsonSink), StreamTo("text", textSink)}, nil)
	if err != nil {
		t.Fatal(err)
	}

	bak := occ("DuplicatePod", "kube-apiserver.yaml.bak wins over kube-apiserver.yaml")
	other := occ("InvalidManifest", "etcd.yaml: line 3: bad")
	const relists = 180 // an hour at 20s
	for i := range relists {
		mustRecord(t, r, bak)
		if i == 1 {
			mustRecord(t, r, other)
		}
		clk.Step(20 * time.Second)
	}
	if n := strings.Count(js.String(), "\n"); n != relists+1 {
		t.Errorf("json printed %d lines, want every occurrence: %d", n, relists+1)
	}
	lines := strings.Split(strings.TrimSuffix(txt.String(), "\n"), "\n")
	var counts []string
	for _, l := range lines {
		if strings.Contains(l, "DuplicatePod") {
			counts = append(counts, l[strings.Index(l, "(x"):strings.Index(l, ")")+1])
		}
	}
	// Printed at 0, 10m, 20m, ... 50m: the 1st, 31st, 61st ... occurrence.
	want := []string{"(x1)", "(x31)", "(x61)", "(x91)", "(x121)", "(x151)"}
	if strings.Join(counts, " ") != strings.Join(want, " ") {
		t.Errorf("text lines of the repeating Event carry counts %v, want %v\n%s", counts, want, txt.String())
	}
	if n := strings.Count(txt.String(), "InvalidManifest"); n != 1 {
		t.Errorf("another Event printed %d times, want 1", n)
	}
	var text SinkStats
	for _, s := range r.Stats().Sinks {
		if s.Name == "text" {
			text = s
		}
	}
	if text.Written != uint64(len(lines)) || text.Written+text.Coalesced != relists+1 || text.Failed != 0 {
		t.Errorf("text sink stats %+v: want %d written, the rest coalesced", text, len(lines))
	}

	// A new message on the same Event (a combined one) is printed at once,
	// the same message again is not.
	ev := &v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "node-1.1"}, Reason: "InvalidManifest", Message: "a", Count: 1}
	for i, msg := range []string{"a", "a", "b", "b"} {
		before := txt.Len()
		ev.Message, ev.Count = msg, int32(i+1)
		err := textSink.Write(t.Context(), ev, i > 0)
		printed := txt.Len() > before
		if want := i%2 == 0; printed != want {
			t.Errorf("write %d (%q): printed %v, want %v (err %v)", i, msg, printed, want, err)
		}
	}
}

// A negative interval prints every occurrence in text as well.
func TestTextRepeatNegativePrintsAll(t *testing.T) {
	var txt bytes.Buffer
	sink, err := NewStreamSink(&txt, OutputText, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("text", sink)}, nil)
	for range 3 {
		mustRecord(t, r, occ("InvalidManifest", "x.yaml: bad"))
	}
	if n := strings.Count(txt.String(), "\n"); n != 3 {
		t.Fatalf("printed %d lines, want 3", n)
	}
}

// textJournal is a Recorder printing text, with the default repeat
// interval, on a fake clock.
func textJournal(t *testing.T) (*Recorder, *bytes.Buffer, *clocktesting.FakeClock) {
	t.Helper()
	var txt bytes.Buffer
	clk := clocktesting.NewFakeClock(t0)
	sink, err := NewStreamSink(&txt, OutputText, 0, clk)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Host: "node-1"}, clk, nil, []Registration{StreamTo("text", sink)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, &txt, clk
}

// textLines returns the printed lines of reason, without their timestamps.
func textLines(txt *bytes.Buffer, reason string) []string {
	var out []string
	for l := range strings.Lines(txt.String()) {
		if _, rest, ok := strings.Cut(strings.TrimSuffix(l, "\n"), " "); ok && strings.Contains(l, " "+reason+" ") {
			out = append(out, strings.Join(strings.Fields(rest), " "))
		}
	}
	return out
}

func podOcc(reason, msg string) Occurrence {
	return Occurrence{Object: PodRef("kube-system", "etcd-node-1"), Type: "Normal", Reason: reason, Message: msg}
}

// A change whose words repeat an earlier one is news all the same: an edit
// undone and redone is three lines, the last naming the redone image, and a
// manifest removed and put back twice is four, the last one the ADD.
func TestTextPrintsEveryChange(t *testing.T) {
	r, txt, clk := textJournal(t)
	for _, msg := range []string{"image: etcd:3.6.15 -> etcd:3.6.16", "image: etcd:3.6.16 -> etcd:3.6.15", "image: etcd:3.6.15 -> etcd:3.6.16"} {
		mustRecord(t, r, podOcc("StaticPodUpdated", msg))
		clk.Step(5 * time.Second)
	}
	want := []string{
		"Normal StaticPodUpdated kube-system/pod/etcd-node-1 (x1): image: etcd:3.6.15 -> etcd:3.6.16",
		"Normal StaticPodUpdated kube-system/pod/etcd-node-1 (x1): image: etcd:3.6.16 -> etcd:3.6.15",
		"Normal StaticPodUpdated kube-system/pod/etcd-node-1 (x2): image: etcd:3.6.15 -> etcd:3.6.16",
	}
	if got := textLines(txt, "StaticPodUpdated"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("an edit undone and redone printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	txt.Reset()
	for range 2 {
		mustRecord(t, r, podOcc("StaticPodRemoved", "etcd.yaml was removed: the kubelet stops it"))
		clk.Step(5 * time.Second)
		mustRecord(t, r, podOcc("StaticPodAdded", "etcd.yaml: the kubelet starts it"))
		clk.Step(5 * time.Second)
	}
	var reasons []string
	for l := range strings.Lines(txt.String()) {
		reasons = append(reasons, strings.Fields(l)[2])
	}
	if got, want := strings.Join(reasons, " "), "StaticPodRemoved StaticPodAdded StaticPodRemoved StaticPodAdded"; got != want {
		t.Errorf("a manifest removed and put back twice printed %s, want %s:\n%s", got, want, txt)
	}
}

// Every reason but a problem's reports something that happened once: the
// follow results and the node's state transitions print at each occurrence
// as the kubelet's operations do, however soon they repeat. Only the
// problems the diff reports again while they last are held back.
func TestTextPrintsEveryNonProblem(t *testing.T) {
	for reason, lines := range map[string]int{
		"StaticPodAdded": 3, "StaticPodUpdated": 3, "StaticPodRemoved": 3, "StaticPodMayHaveRestarted": 3,
		"StaticPodStarted": 3, "StaticPodNotStarted": 3, "StaticPodStopped": 3, "StaticPodNotStopped": 3, "StaticPodRestarting": 3,
		"StatePersisted": 3, "StateNotPersisted": 3, "KubeletRelistLost": 3,
		"DuplicatePod": 1, "InvalidManifest": 1, "ManifestIgnoredContent": 1, "ManifestUnreadable": 1,
		"ManifestPathMissing": 1, "WatchDegraded": 1,
	} {
		r, txt, clk := textJournal(t)
		for range 3 {
			mustRecord(t, r, occ(reason, "the same words"))
			clk.Step(time.Second)
		}
		if got := textLines(txt, reason); len(got) != lines || !strings.Contains(got[lines-1], fmt.Sprintf("(x%d)", lines)) {
			t.Errorf("%s recorded 3 times printed %q, want %d lines, the last with x%[3]d", reason, got, lines)
		}
	}
}

// A problem held back behind a change would leave the change as the last
// word while the problem still stands, or stands again: a typo fixed (the
// ADD, on the pod) and made again (the same InvalidManifest, on the node), a
// .bak still shadowing the pod just updated. Its next occurrence after a
// change is printed once, then held back again; another problem's line does
// not count as a change.
func TestTextRestatesProblemsAfterAChange(t *testing.T) {
	r, txt, clk := textJournal(t)
	typo := occ("InvalidManifest", "etcd.yaml: line 3: did not find expected key")
	bak := Occurrence{Object: PodRef("kube-system", "etcd-node-1"), Type: "Warning", Reason: "DuplicatePod",
		Message: "etcd.yaml.bak and etcd.yaml declare the same pod; the kubelet runs the one from etcd.yaml"}
	relist := func() {
		mustRecord(t, r, bak)
		clk.Step(20 * time.Second)
	}

	mustRecord(t, r, typo)
	relist()
	mustRecord(t, r, podOcc("StaticPodAdded", "etcd.yaml: the kubelet starts it"))
	relist()
	mustRecord(t, r, typo)
	relist()
	relist()
	mustRecord(t, r, typo)

	if got := textLines(txt, "InvalidManifest"); len(got) != 2 || !strings.Contains(got[1], "(x2)") {
		t.Errorf("a typo made again after its fix printed %q, want 2 lines, the second x2", got)
	}
	// bak: printed at the 1st occurrence, restated at the 2nd (after the
	// ADD), held at the 3rd and 4th.
	if got := textLines(txt, "DuplicatePod"); len(got) != 2 || !strings.Contains(got[0], "(x1)") || !strings.Contains(got[1], "(x2)") {
		t.Errorf("a duplicate across an ADD of its pod printed %q, want x1 and x2 only", got)
	}
	if got := textLines(txt, "StaticPodAdded"); len(got) != 1 {
		t.Errorf("the ADD printed %q, want 1 line", got)
	}
}
