package events

import (
	"fmt"
	"testing"
	"time"
)

func update(key, msg string) Occurrence {
	return Occurrence{Object: PodRef("kube-system", "web-node-1"), Type: "Normal", Reason: "StaticPodUpdated",
		File: "x.yaml", Key: key, Message: msg}
}

// Occurrences of one key are one Event however they are worded: a hedge
// added or a temp file's random name does not split it, and the Event
// says the latest wording.
func TestKeyedOccurrencesShareAnEventWhateverTheWording(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	msgs := []string{
		"x.yaml: image a -> b; the kubelet may have taken in sedaC7Gea",
		"x.yaml: image a -> b; the kubelet may have taken in sedQ1x9Zz",
		"x.yaml: image a -> b",
	}
	for _, m := range msgs {
		mustRecord(t, r, update("a>b", m))
		clk.Step(time.Second)
	}
	evs := lastByName(out.got())
	if len(evs) != 1 {
		t.Fatalf("one key worded three ways made %d Events, want 1", len(evs))
	}
	for _, w := range evs {
		if w.ev.Count != 3 || w.ev.Message != msgs[2] {
			t.Fatalf("Event x%d %q, want x3 with the latest message %q", w.ev.Count, w.ev.Message, msgs[2])
		}
	}
}

// An edit flipped back and forth is two transitions: two Events, each
// counting its own flips, not ten Events nor one combined.
func TestFlipsCountOnTwoEvents(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	for i := range 10 {
		key, msg := "a>b", "x.yaml: image a -> b; may have taken in sed%03d"
		if i%2 == 1 {
			key, msg = "b>a", "x.yaml: image b -> a; may have taken in sed%03d"
		}
		mustRecord(t, r, update(key, fmt.Sprintf(msg, i)))
		clk.Step(time.Second)
	}
	evs := lastByName(out.got())
	if len(evs) != 2 {
		t.Fatalf("ten flips made %d Events, want 2", len(evs))
	}
	for _, w := range evs {
		if w.ev.Count != 5 {
			t.Fatalf("%s x%d, want x5 (%q)", w.ev.Name, w.ev.Count, w.ev.Message)
		}
	}
	if st := r.Stats(); st.Combined != 0 {
		t.Fatalf("%d occurrences went to a combined Event, want none", st.Combined)
	}
}

// Different transitions still combine as client-go does, by key, with the
// latest in the message.
func TestDistinctKeysCombine(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{AggregateMax: 3}, []Registration{StreamTo("out", out)}, nil)
	for i := range 4 {
		mustRecord(t, r, update(fmt.Sprintf("k%d", i), fmt.Sprintf("x.yaml: image v%d -> v%d", i, i+1)))
		clk.Step(time.Minute)
	}
	ws := out.got()
	last := ws[len(ws)-1].ev
	if want := CombinedPrefix + "4 updates in 3m; latest: x.yaml: image v3 -> v4"; last.Message != want || last.Count != 2 {
		t.Fatalf("last write %q x%d, want %q x2", last.Message, last.Count, want)
	}
	if n := len(lastByName(ws)); n != 3 {
		t.Fatalf("%d Events, want 2 of their own and 1 combined", n)
	}
}

// One invalid file is one Event whose message follows its latest error.
func TestInvalidFileFollowsItsLatestError(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	inv := occ("InvalidManifest", "a.yaml: line 3: yaml: could not find expected ':'")
	inv.File, inv.Key = "a.yaml", "invalid/a.yaml/content"
	mustRecord(t, r, inv)
	clk.Step(30 * time.Second)
	inv.Message = "a.yaml: line 7: spec.containers[0].image: Required value; the kubelet keeps running pod kube-system/a-node-1"
	mustRecord(t, r, inv)
	evs := lastByName(out.got())
	if len(evs) != 1 {
		t.Fatalf("one invalid file made %d Events, want 1", len(evs))
	}
	for _, w := range evs {
		if w.ev.Count != 2 || w.ev.Message != inv.Message {
			t.Fatalf("Event x%d %q, want x2 %q", w.ev.Count, w.ev.Message, inv.Message)
		}
	}
}
