package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// testSink records writes; writeFn, when set, decides the result.
type testSink struct {
	writes  []*v1.Event
	updates []bool
	writeFn func(ev *v1.Event) error
}

func (s *testSink) Write(_ context.Context, ev *v1.Event, update bool) error {
	s.writes = append(s.writes, ev)
	s.updates = append(s.updates, update)
	if s.writeFn != nil {
		return s.writeFn(ev)
	}
	return nil
}

func TestRepeatRaisesCountUnderOneName(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	sink := &testSink{}
	r := NewRecorder("node-1", clk, sink)
	o := Occurrence{Object: NodeRef("node-1"), Type: "Warning", Reason: "InvalidManifest", Message: "bad.yaml: line 3: oops"}
	for range 3 {
		if err := r.Record(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		clk.SetTime(clk.Now().Add(20 * time.Second))
	}
	if len(sink.writes) != 3 {
		t.Fatalf("writes = %d, want 3", len(sink.writes))
	}
	first, last := sink.writes[0], sink.writes[2]
	if first.Name != last.Name || !strings.HasPrefix(first.Name, "node-1.") {
		t.Fatalf("names %q and %q: want one name node-1.<hex>", first.Name, last.Name)
	}
	if last.Count != 3 || first.Count != 1 {
		t.Fatalf("counts first=%d last=%d, want 1 and 3", first.Count, last.Count)
	}
	if got := last.LastTimestamp.Sub(last.FirstTimestamp.Time); got != 40*time.Second {
		t.Fatalf("lastTimestamp - firstTimestamp = %v, want 40s", got)
	}
	if sink.updates[0] || !sink.updates[1] {
		t.Fatalf("updates = %v, want first a create then updates", sink.updates)
	}
	if last.Namespace != "default" || last.InvolvedObject.UID != "node-1" || last.Source.Host != "node-1" || last.Source.Component != "podwatch" {
		t.Fatalf("node event metadata wrong: %+v", last)
	}
}

func TestDistinctMessagesAreDistinctEvents(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1_800_000_000, 0))
	sink := &testSink{}
	r := NewRecorder("n", clk, sink)
	ctx := context.Background()
	_ = r.Record(ctx, Occurrence{Object: PodRef("kube-system", "etcd-n"), Type: "Normal", Reason: "StaticPodAdded", Message: "a"})
	clk.SetTime(clk.Now().Add(time.Millisecond))
	_ = r.Record(ctx, Occurrence{Object: PodRef("kube-system", "etcd-n"), Type: "Normal", Reason: "StaticPodAdded", Message: "b"})
	if sink.writes[0].Name == sink.writes[1].Name || sink.writes[1].Count != 1 {
		t.Fatalf("distinct messages shared an Event: %q %q count %d", sink.writes[0].Name, sink.writes[1].Name, sink.writes[1].Count)
	}
	if sink.writes[0].Namespace != "kube-system" {
		t.Fatalf("pod event namespace = %q, want kube-system", sink.writes[0].Namespace)
	}
}

func TestSinkErrorsAreReturned(t *testing.T) {
	boom := errors.New("boom")
	bad := &testSink{writeFn: func(*v1.Event) error { return boom }}
	good := &testSink{}
	r := NewRecorder("n", clocktesting.NewFakePassiveClock(time.Unix(0, 0)), bad, good)
	err := r.Record(context.Background(), Occurrence{Object: NodeRef("n"), Type: "Warning", Reason: "X", Message: "m"})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if len(good.writes) != 1 {
		t.Fatalf("a failing sink stopped the others: good got %d writes", len(good.writes))
	}
}

func TestStreamSinkFormats(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	var js, txt bytes.Buffer
	jsonSink, err := NewStreamSink(&js, OutputJSON)
	if err != nil {
		t.Fatal(err)
	}
	textSink, _ := NewStreamSink(&txt, OutputText)
	r := NewRecorder("node-1", clk, jsonSink, textSink)
	_ = r.Record(context.Background(), Occurrence{Object: PodRef("default", "web-node-1"), Type: "Normal", Reason: "StaticPodAdded", Message: "web.yaml: added"})
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
	if _, err := NewStreamSink(&js, "yaml"); err == nil {
		t.Fatal("unknown format accepted")
	}
}
