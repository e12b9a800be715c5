package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// stored builds an Event as the local store would return it.
func stored(o Occurrence, name string, count int32, first, last time.Time) v1.Event {
	e := &entry{object: o.Object, typ: o.Type, reason: o.Reason, message: o.Message,
		name: name, first: first, last: last, count: count}
	if fileScoped(o.Reason) {
		e.file = o.File
	}
	return *e.event("node-1")
}

func TestRestoreContinuesCountAndName(t *testing.T) {
	o := occ("InvalidManifest", "bad.yaml: line 3: oops")
	o.File = "bad.yaml"
	name := eventName("node-1", t0.Add(-30*time.Minute).UnixNano())
	prev := stored(o, name, 7, t0.Add(-30*time.Minute), t0.Add(-time.Minute))
	out, api := &fakeSink{}, &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out), DeliverTo("api", api)}, []v1.Event{prev})
	mustRecord(t, r, o)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for sink, w := range map[string]write{"out": out.got()[0], "api": api.got()[0]} {
		if w.ev.Name != name || w.ev.Count != 8 || !w.update || !w.ev.FirstTimestamp.Equal(&prev.FirstTimestamp) {
			t.Fatalf("%s: %s x%d update=%v first=%v, want %s x8 as an update, first kept", sink, w.ev.Name, w.ev.Count, w.update, w.ev.FirstTimestamp, name)
		}
	}
}

func TestRestoreSkipsForeignAndExpiredEvents(t *testing.T) {
	o := occ("WatchDegraded", "x")
	foreign := stored(o, "node-1.1", 5, t0.Add(-time.Minute), t0.Add(-time.Minute))
	foreign.Source.Host = "node-2"
	old := stored(o, "node-1.2", 5, t0.Add(-3*time.Hour), t0.Add(-2*time.Hour))
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, []v1.Event{foreign, old})
	mustRecord(t, r, o)
	if w := out.got()[0]; w.ev.Count != 1 || w.update {
		t.Fatalf("continued a foreign or expired Event: %s x%d", w.ev.Name, w.ev.Count)
	}
}

func TestRestoreKeepsNamesUnique(t *testing.T) {
	// A stored Event named at the current instant: a new Event at the same
	// instant must not reuse the name.
	prev := stored(occ("R", "old"), eventName("node-1", t0.UnixNano()), 1, t0, t0)
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, []v1.Event{prev})
	mustRecord(t, r, occ("R", "new"))
	if got := out.got()[0].ev.Name; got == prev.Name {
		t.Fatalf("new Event reused the stored name %s", got)
	}
}

func TestRestoreContinuesAggregation(t *testing.T) {
	// Nine messages of one file before the restart: the tenth after it is
	// combined, and a combined Event continues its count.
	var prev []v1.Event
	for i := range 9 {
		o := occ("InvalidManifest", fmt.Sprintf("g.yaml: error %d", i))
		o.File = "g.yaml"
		at := t0.Add(-time.Duration(9-i) * 30 * time.Second)
		prev = append(prev, stored(o, eventName("node-1", at.UnixNano()), 1, at, at))
	}
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out)}, prev)
	o := occ("InvalidManifest", "g.yaml: error 9")
	o.File = "g.yaml"
	mustRecord(t, r, o)
	w := out.got()[0]
	if !strings.HasPrefix(w.ev.Message, CombinedPrefix) || w.ev.Annotations[AnnotationFile] != "g.yaml" {
		t.Fatalf("tenth message after restart: %q, want combined", w.ev.Message)
	}

	comb := *w.ev
	comb.Count = 4
	out2 := &fakeSink{}
	r2, _ := newTest(t, Options{}, []Registration{StreamTo("out", out2)}, append(prev, comb))
	o.Message = "g.yaml: error 10"
	mustRecord(t, r2, o)
	if got := out2.got()[0].ev; got.Name != comb.Name || got.Count != 5 {
		t.Fatalf("combined after restart: %s x%d, want %s x5", got.Name, got.Count, comb.Name)
	}
	// The group's count and span come back from the stored Events: nine
	// of one each and the combined one of four, the first 4m30s ago.
	if got, want := out2.got()[0].ev.Message, CombinedPrefix+"14 similar events in 4m30s; latest: g.yaml: error 10"; got != want {
		t.Fatalf("combined after restart: %q, want %q", got, want)
	}
}

func TestRestoredCacheKeepsNewest(t *testing.T) {
	var prev []v1.Event
	for i := range 5 {
		at := t0.Add(-time.Duration(5-i) * time.Minute)
		prev = append(prev, stored(occ("R", fmt.Sprintf("m%d", i)), fmt.Sprintf("node-1.%x", i+1), 3, at, at))
	}
	r, _ := newTest(t, Options{CacheSize: 2, AggregateMax: -1}, nil, prev)
	if st := r.Stats(); st.Events != 2 {
		t.Fatalf("restored %d Events into a cache of 2", st.Events)
	}
	o := occ("R", "m4")
	if e, ok := r.events.get(plainKey(groupKeyOf(&o), &o), t0); !ok || e.count != 3 {
		t.Fatal("the newest stored Event did not survive the cap")
	}
}
