package events

import (
	"bytes"
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
	ev := &v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "node-1.1"}, Message: "a", Count: 1}
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
