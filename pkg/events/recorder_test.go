package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
)

func TestRepeatRaisesCountUnderOneName(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{}, []Registration{StreamTo("out", out)}, nil)
	o := occ("InvalidManifest", "bad.yaml: line 3: oops")
	for range 3 {
		mustRecord(t, r, o)
		clk.Step(20 * time.Second)
	}
	ws := out.got()
	if len(ws) != 3 {
		t.Fatalf("writes = %d, want 3", len(ws))
	}
	first, last := ws[0].ev, ws[2].ev
	if first.Name != last.Name || !strings.HasPrefix(first.Name, "node-1.") {
		t.Fatalf("names %q and %q: want one name node-1.<hex>", first.Name, last.Name)
	}
	if first.Name != eventName("node-1", t0.UnixNano()) {
		t.Fatalf("name %q, want <object>.<hex nanos of the first occurrence>", first.Name)
	}
	if last.Count != 3 || first.Count != 1 {
		t.Fatalf("counts first=%d last=%d, want 1 and 3", first.Count, last.Count)
	}
	if !last.FirstTimestamp.Equal(&first.FirstTimestamp) || last.LastTimestamp.Sub(last.FirstTimestamp.Time) != 40*time.Second {
		t.Fatalf("timestamps first=%v last=%v, want first kept and last 40s later", last.FirstTimestamp, last.LastTimestamp)
	}
	if ws[0].update || !ws[1].update {
		t.Fatalf("updates = %v %v, want a create then updates", ws[0].update, ws[1].update)
	}
	if last.Namespace != "default" || last.InvolvedObject.UID != "node-1" || last.Source.Host != "node-1" || last.Source.Component != Component {
		t.Fatalf("node event metadata wrong: %+v", last)
	}
}

func TestEveryKeyFieldSeparatesEvents(t *testing.T) {
	out := &fakeSink{}
	r, _ := newTest(t, Options{AggregateMax: -1}, []Registration{StreamTo("out", out)}, nil)
	base := Occurrence{Object: PodRef("kube-system", "etcd-n"), Type: "Normal", Reason: "StaticPodAdded", Message: "a"}
	variants := []func(*Occurrence){
		func(*Occurrence) {},
		func(o *Occurrence) { o.Message = "b" },
		func(o *Occurrence) { o.Reason = "StaticPodUpdated" },
		func(o *Occurrence) { o.Type = "Warning" },
		func(o *Occurrence) { o.Object.Name = "etcd-m" },
		func(o *Occurrence) { o.Object.Namespace = "default" },
		func(o *Occurrence) { o.Object.UID = "u" },
		func(o *Occurrence) { o.Object.Kind = "Node" },
		func(o *Occurrence) { o.Object.APIVersion = "v2" },
	}
	names := map[string]bool{}
	for _, v := range variants {
		o := base
		v(&o)
		mustRecord(t, r, o) // all at one instant: names must still differ
	}
	for _, w := range out.got() {
		if w.ev.Count != 1 {
			t.Fatalf("%s: count %d, want 1 (keys collided)", w.ev.Name, w.ev.Count)
		}
		names[w.ev.Name] = true
	}
	if len(names) != len(variants) {
		t.Fatalf("%d distinct names for %d distinct events", len(names), len(variants))
	}
	// A resource version is not part of the key.
	o := base
	o.Object.ResourceVersion = "42"
	mustRecord(t, r, o)
	if ws := out.got(); ws[len(ws)-1].ev.Count != 2 || ws[len(ws)-1].ev.InvolvedObject.ResourceVersion != "" {
		t.Fatalf("resourceVersion split the event: %+v", ws[len(ws)-1].ev)
	}
}

func TestStreamSinkSeesEveryOccurrence(t *testing.T) {
	out := &fakeSink{}
	api := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("out", out), DeliverTo("api", api)}, nil)
	const n = 1000
	for range n {
		mustRecord(t, r, occ("WatchDegraded", "inotify limit reached"))
	}
	ws := out.got()
	if len(ws) != n {
		t.Fatalf("stream got %d writes, want %d", len(ws), n)
	}
	for i, w := range ws {
		if w.ev.Count != int32(i+1) || w.update != (i > 0) {
			t.Fatalf("stream write %d: count %d update %v", i, w.ev.Count, w.update)
		}
	}
	if len(api.got()) != 0 {
		t.Fatal("a delivered sink was written without Run or Flush")
	}
}

func TestStreamErrorsAreReturnedAndCounted(t *testing.T) {
	boom := errors.New("boom")
	bad := &fakeSink{writeFn: func(context.Context, *v1.Event, bool) error { return boom }}
	good := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("bad", bad), StreamTo("good", good)}, nil)
	err := r.Record(context.Background(), occ("X", "m"))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if len(good.got()) != 1 {
		t.Fatalf("a failing sink stopped the others: good got %d writes", len(good.got()))
	}
	if s := sinkStats(t, r, "bad"); s.Failed != 1 || s.Written != 0 {
		t.Fatalf("bad sink stats %+v", s)
	}
	if s := sinkStats(t, r, "good"); s.Written != 1 || s.Mode != Stream {
		t.Fatalf("good sink stats %+v", s)
	}
}

func TestRecordRejectsEmptyOccurrence(t *testing.T) {
	r, _ := newTest(t, Options{}, nil, nil)
	if err := r.Record(context.Background(), Occurrence{Reason: "X"}); err == nil {
		t.Fatal("occurrence without an object name accepted")
	}
	if err := r.Record(context.Background(), Occurrence{Object: NodeRef("n")}); err == nil {
		t.Fatal("occurrence without a reason accepted")
	}
	if r.Stats().Recorded != 0 {
		t.Fatal("rejected occurrences were counted")
	}
}

func TestNewRejectsBadRegistrations(t *testing.T) {
	s := &fakeSink{}
	for name, regs := range map[string][]Registration{
		"no name":   {StreamTo("", s)},
		"nil sink":  {DeliverTo("api", nil)},
		"duplicate": {StreamTo("x", s), DeliverTo("x", s)},
		"mode":      {{Name: "x", Sink: s, Mode: Mode(7)}},
	} {
		if _, err := New(Options{Host: "n"}, nil, nil, regs, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(Options{}, nil, nil, nil, nil); err == nil {
		t.Error("empty host accepted")
	}
}

func TestStreamSinkFormats(t *testing.T) {
	var js, txt bytes.Buffer
	jsonSink, err := NewStreamSink(&js, OutputJSON, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	textSink, _ := NewStreamSink(&txt, OutputText, 0, nil)
	r, _ := newTest(t, Options{}, []Registration{StreamTo("json", jsonSink), StreamTo("text", textSink)}, nil)
	mustRecord(t, r, Occurrence{Object: PodRef("default", "web-node-1"), Type: "Normal", Reason: "StaticPodAdded", Message: "web.yaml: added"})
	var ev v1.Event
	if err := json.Unmarshal(js.Bytes(), &ev); err != nil {
		t.Fatalf("json line does not decode as an Event: %v\n%s", err, js.String())
	}
	if ev.Kind != "Event" || ev.APIVersion != "v1" || ev.Count != 1 || ev.FirstTimestamp.IsZero() || ev.InvolvedObject.Kind != "Pod" {
		t.Fatalf("decoded event incomplete: %+v", ev)
	}
	want := "2026-11-30T09:00:00Z Normal  StaticPodAdded         default/pod/web-node-1 (x1): web.yaml: added\n"
	if txt.String() != want {
		t.Fatalf("text line\n got %q\nwant %q", txt.String(), want)
	}
	if _, err := NewStreamSink(&js, "yaml", 0, nil); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestPermanentWrapping(t *testing.T) {
	base := errors.New("422 invalid")
	err := Permanent(base)
	if !errors.Is(err, ErrPermanent) || !errors.Is(err, base) {
		t.Fatalf("Permanent(%v) = %v: want both ErrPermanent and the cause", base, err)
	}
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) != nil")
	}
	if errors.Is(base, ErrPermanent) {
		t.Fatal("plain error classed permanent")
	}
}

func TestLongMessagesAreCapped(t *testing.T) {
	out := &fakeSink{}
	r, _ := newTest(t, Options{}, []Registration{StreamTo("stdout", out)}, nil)
	// A 3-byte rune straddles the cut.
	long := strings.Repeat("a", MaxMessage-14) + strings.Repeat("€", 2000)
	mustRecord(t, r, occ("InvalidManifest", long))
	got := out.got()[0].ev.Message
	if len(got) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, " [truncated]") {
		t.Fatalf("message of %d bytes (valid UTF-8 %v) ends %q", len(got), utf8.ValidString(got), got[max(0, len(got)-20):])
	}
	if !strings.HasPrefix(got, long[:MaxMessage-14]) {
		t.Error("the start of the message was not kept")
	}
	short := "etcd.yaml: line 3: bad"
	mustRecord(t, r, occ("InvalidManifest", short))
	if got := out.got()[1].ev.Message; got != short {
		t.Errorf("short message changed to %q", got)
	}
}
