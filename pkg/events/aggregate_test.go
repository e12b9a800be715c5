package events

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// lastByName folds a stream of writes into the latest state of each Event.
func lastByName(ws []write) map[string]write {
	m := map[string]write{}
	for _, w := range ws {
		m[w.ev.Name] = w
	}
	return m
}

func TestTenDistinctMessagesInTenMinutesCombine(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	pod := Occurrence{Object: PodRef("kube-system", "etcd-node-1"), Type: "Normal", Reason: "StaticPodUpdated"}
	for i := range 9 {
		pod.Message = fmt.Sprintf("image changed to etcd:3.%d", i)
		mustRecord(t, r, pod)
		clk.Step(time.Minute)
	}
	if ws := out.got(); len(lastByName(ws)) != 9 {
		t.Fatalf("9 distinct messages made %d Events, want 9", len(lastByName(ws)))
	}
	pod.Message = "image changed to etcd:3.9"
	mustRecord(t, r, pod) // the tenth distinct message within 10 minutes
	ws := out.got()
	comb := ws[len(ws)-1].ev
	// The message says how many updates over how long, and keeps the latest
	// in full.
	if comb.Message != CombinedPrefix+"10 updates in 9m; latest: image changed to etcd:3.9" || comb.Count != 1 || comb.Reason != "StaticPodUpdated" {
		t.Fatalf("tenth message: %+v, want a combined Event", comb)
	}
	pod.Message = "image changed to etcd:3.10"
	mustRecord(t, r, pod)
	ws = out.got()
	if got := ws[len(ws)-1].ev; got.Name != comb.Name || got.Count != 2 || got.Message != CombinedPrefix+"11 updates in 9m; latest: "+pod.Message {
		t.Fatalf("eleventh message: %s x%d %q, want combined %s x2 with the latest message", got.Name, got.Count, got.Message, comb.Name)
	}
	// A repeat of a message that has its own Event keeps counting there.
	pod.Message = "image changed to etcd:3.0"
	mustRecord(t, r, pod)
	ws = out.got()
	if got := ws[len(ws)-1].ev; got.Name != ws[0].ev.Name || got.Count != 2 {
		t.Fatalf("repeat of the first message: %s x%d, want %s x2", got.Name, got.Count, ws[0].ev.Name)
	}
	if st := r.Stats(); st.Combined != 2 || st.Events != 10 {
		t.Fatalf("stats %+v, want 2 combined occurrences, 10 Events", st)
	}
}

func TestAggregationResetsAfterQuietInterval(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	for i := range 9 {
		mustRecord(t, r, occ("WatchDegraded", fmt.Sprintf("m%d", i)))
	}
	clk.Step(10*time.Minute + time.Second)
	mustRecord(t, r, occ("WatchDegraded", "m9"))
	ws := out.got()
	if got := ws[len(ws)-1].ev.Message; strings.HasPrefix(got, CombinedPrefix) {
		t.Fatalf("message after a quiet interval combined: %q", got)
	}
}

func TestFileScopedReasonsKeepFilesApart(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	// Ten broken files: ten Events, none combined.
	for i := range 10 {
		o := occ("InvalidManifest", fmt.Sprintf("f%d.yaml: line 1: bad", i))
		o.File = fmt.Sprintf("f%d.yaml", i)
		mustRecord(t, r, o)
	}
	evs := lastByName(out.got())
	if len(evs) != 10 {
		t.Fatalf("ten broken files made %d Events, want 10", len(evs))
	}
	for _, w := range evs {
		if strings.HasPrefix(w.ev.Message, CombinedPrefix) {
			t.Fatalf("a file's Event was combined: %q", w.ev.Message)
		}
		if w.ev.Annotations[AnnotationFile] == "" {
			t.Fatalf("file-scoped Event without %s: %+v", AnnotationFile, w.ev.ObjectMeta)
		}
	}
	// One file whose error keeps changing collapses.
	clk.Step(time.Second)
	for i := range 12 {
		o := occ("InvalidManifest", fmt.Sprintf("g.yaml: line %d: bad", i))
		o.File = "g.yaml"
		mustRecord(t, r, o)
	}
	ws := out.got()
	last := ws[len(ws)-1].ev
	if !strings.HasPrefix(last.Message, CombinedPrefix+"12 similar events in 0s; latest: g.yaml: line 11") || last.Count != 3 || last.Annotations[AnnotationFile] != "g.yaml" {
		t.Fatalf("changing errors of one file: last %q x%d %v, want combined x3", last.Message, last.Count, last.Annotations)
	}
	if n := len(lastByName(ws)); n != 10+9+1 {
		t.Fatalf("%d Events, want 10 files + 9 messages of g.yaml + 1 combined", n)
	}
}

func TestAggregationOff(t *testing.T) {
	out := &fakeSink{}
	r, _ := newTest(t, Options{AggregateMax: -1}, []Registration{StreamTo("out", out)}, nil)
	for i := range 50 {
		mustRecord(t, r, occ("WatchDegraded", fmt.Sprintf("m%d", i)))
	}
	if n := len(lastByName(out.got())); n != 50 || r.Stats().Combined != 0 {
		t.Fatalf("%d Events with aggregation off, want 50", n)
	}
}

// A combined Event's message keeps to MaxMessage however long the latest
// message is: the count and span come first, the latest message is cut.
func TestCombinedMessageKeepsTheCap(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{AggregateMax: 2}, []Registration{StreamTo("out", out)}, nil)
	mustRecord(t, r, occ("R", "first"))
	clk.Step(90 * time.Second)
	long := strings.Repeat("x", MaxMessage)
	mustRecord(t, r, occ("R", long))
	ws := out.got()
	got := ws[len(ws)-1].ev.Message
	want := CombinedPrefix + "2 similar events in 90s; latest: xxx"
	if len(got) > MaxMessage || !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " [truncated]") {
		t.Fatalf("combined message of %d bytes %.60q..., want at most %d starting %q, truncated", len(got), got, MaxMessage, want)
	}
}
