package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// The write-rate report of docs/design/api-write-rates.md: the same stream
// of occurrences through podwatch's Recorder (default Options) and through
// client-go's record.EventCorrelator (default spam filter and aggregator),
// on a fake clock.

var rateT0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// rateStream is n occurrences, one every `every` (0: all at one instant);
// occ(i) is the i-th.
type rateStream struct {
	name  string
	n     int
	every time.Duration
	occ   func(i int) events.Occurrence
}

func rateStreams() []rateStream {
	pod := events.PodRef(podNS, podName)
	flap := [2]string{
		"kube-apiserver.yaml: spec.containers[kube-apiserver].image: registry.k8s.io/kube-apiserver:v1.37.1 -> registry.k8s.io/kube-apiserver:v1.37.2; the kubelet gives the pod a new UID and restarts it",
		"kube-apiserver.yaml: spec.containers[kube-apiserver].image: registry.k8s.io/kube-apiserver:v1.37.2 -> registry.k8s.io/kube-apiserver:v1.37.1; the kubelet gives the pod a new UID and restarts it",
	}
	invalid := events.Occurrence{Object: events.NodeRef(node), Type: v1.EventTypeWarning, Reason: types.ReasonInvalid,
		Message: "etcd.yaml: line 14: spec.containers[0].image: Required value", File: "etcd.yaml"}
	return []rateStream{
		{name: "flapping manifest, 1/s for 10 min", n: 600, every: time.Second, occ: func(i int) events.Occurrence {
			return events.Occurrence{Object: pod, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated, Message: flap[i%2]}
		}},
		{name: "invalid manifest, 1/20s for 10 min", n: 30, every: 20 * time.Second, occ: func(int) events.Occurrence { return invalid }},
		{name: "burst: 1,000 at one instant", n: 1000, occ: func(int) events.Occurrence { return invalid }},
	}
}

// rateResult is what one side sent for a stream.
type rateResult struct {
	creates, patches, skipped int
	// delivered is the count the receiving end holds last, per Event name.
	delivered map[string]int32
	// want is the true count per Event (message), for podwatch's check.
	want map[string]int32
}

func (r rateResult) writes() int { return r.creates + r.patches }

func (r rateResult) deliveredTotal() (n int32) {
	for _, c := range r.delivered {
		n += c
	}
	return n
}

// countingSink counts a delivered sink's writes and keeps the last count
// written per Event name. next, when set, is written through.
type countingSink struct {
	next events.Sink

	mu               sync.Mutex
	creates, patches int
	last             map[string]int32
	byMessage        map[string]string // Event name -> message
}

func (s *countingSink) Write(ctx context.Context, ev *v1.Event, update bool) error {
	if s.next != nil {
		if err := s.next.Write(ctx, ev, update); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if update {
		s.patches++
	} else {
		s.creates++
	}
	if s.last == nil {
		s.last, s.byMessage = map[string]int32{}, map[string]string{}
	}
	s.last[ev.Name] = ev.Count
	s.byMessage[ev.Name] = ev.Message
	return nil
}

// simulatePodwatch runs st through a Recorder with default Options on a fake
// clock, one simulated second at a time, then lets the clock run until every
// write is delivered. next, when set, receives the writes (the API sink).
func simulatePodwatch(t *testing.T, st rateStream, next events.Sink) rateResult {
	t.Helper()
	clk := clocktesting.NewFakeClock(rateT0)
	sink := &countingSink{next: next}
	rec, err := events.New(events.Options{Host: node}, clk, nil, []events.Registration{events.DeliverTo("api", sink)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	want := map[string]int32{}
	elapsed := time.Duration(0)
	for i := range st.n {
		for at := time.Duration(i) * st.every; elapsed < at; elapsed += time.Second {
			clk.Step(time.Second)
			settle(t, clk, rec)
		}
		o := st.occ(i)
		want[o.Message]++
		if err := rec.Record(context.Background(), o); err != nil {
			t.Fatalf("Record: %v", err)
		}
		settle(t, clk, rec)
	}
	for range 120 { // the tail: pending writes carry the last counts
		if sinkStats(rec).Pending == 0 {
			break
		}
		clk.Step(time.Second)
		settle(t, clk, rec)
	}
	if st := sinkStats(rec); st.Pending != 0 || st.Dropped != (events.Drops{}) {
		t.Fatalf("not all delivered: %+v", st)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	res := rateResult{creates: sink.creates, patches: sink.patches, delivered: map[string]int32{}, want: map[string]int32{}}
	for name, c := range sink.last {
		res.delivered[name] = c
		res.want[name] = want[sink.byMessage[name]]
	}
	return res
}

func sinkStats(rec *events.Recorder) events.SinkStats {
	return rec.Stats().Sinks[0]
}

// settle waits until the delivery goroutine has nothing it may start at the
// fake clock's now: its queue is empty, or it sleeps on a timer of the fake
// clock. The state must hold twice in a row, a little apart, so a wake-up
// still on its way is not mistaken for rest.
func settle(t *testing.T, clk *clocktesting.FakeClock, rec *events.Recorder) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	calm := 0
	for calm < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("delivery did not settle: %+v", sinkStats(rec))
		}
		time.Sleep(100 * time.Microsecond)
		if sinkStats(rec).Pending == 0 || clk.HasWaiters() {
			calm++
		} else {
			calm = 0
		}
	}
}

// simulateRecord runs st through client-go's EventCorrelator as
// record.EventBroadcaster does: a Skip is not sent, a result with a patch is
// a PATCH, any other a create; after a send the correlator learns the
// server's state (UpdateState).
func simulateRecord(st rateStream) rateResult {
	clk := clocktesting.NewFakeClock(rateT0)
	c := record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: clk})
	res := rateResult{delivered: map[string]int32{}}
	for i := range st.n {
		if i > 0 {
			clk.Step(st.every)
		}
		o := st.occ(i)
		now := metav1.NewTime(clk.Now())
		ev := &v1.Event{
			ObjectMeta: metav1.ObjectMeta{
				Name:      fmt.Sprintf("%v.%x", o.Object.Name, now.UnixNano()),
				Namespace: map[bool]string{true: o.Object.Namespace, false: metav1.NamespaceDefault}[o.Object.Namespace != ""],
			},
			InvolvedObject: o.Object,
			Reason:         o.Reason,
			Message:        o.Message,
			Type:           o.Type,
			Source:         v1.EventSource{Component: events.Component, Host: node},
			FirstTimestamp: now,
			LastTimestamp:  now,
			Count:          1,
		}
		r, err := c.EventCorrelate(ev)
		if err != nil {
			panic(err)
		}
		if r.Skip {
			res.skipped++
			continue
		}
		if len(r.Patch) > 0 {
			res.patches++
		} else {
			res.creates++
		}
		res.delivered[r.Event.Name] = r.Event.Count
		c.UpdateState(r.Event)
	}
	return res
}

func rateRow(st rateStream, side string, r rateResult) string {
	perMin := "-"
	if d := time.Duration(st.n) * st.every; d >= time.Minute {
		perMin = fmt.Sprintf("%.1f", float64(r.writes())/d.Minutes())
	}
	return fmt.Sprintf("| %s | %s | %d | %d (%d create, %d patch) | %s | %d of %d (%d Events) |",
		st.name, side, st.n, r.writes(), r.creates, r.patches, perMin, r.deliveredTotal(), st.n, len(r.delivered))
}

// TestWriteRatePodwatchVsClientGoRecord: podwatch's counts arrive exact on
// every stream; client-go's spam filter drops occurrences. On a burst
// podwatch writes far less; on a steady stream it writes at most once per
// --event-key-interval per Event, which is more often than the spam
// filter's one write per five minutes per object, but fewer than the one
// write per occurrence an exact count would take client-go.
func TestWriteRatePodwatchVsClientGoRecord(t *testing.T) {
	t.Parallel()
	rows := []string{
		"| stream | recorder | occurrences | API writes | writes/min | count delivered |",
		"|---|---|---|---|---|---|",
	}
	for _, st := range rateStreams() {
		pw := simulatePodwatch(t, st, nil)
		cg := simulateRecord(st)
		rows = append(rows, rateRow(st, "podwatch", pw), rateRow(st, "client-go record", cg))

		for name, c := range pw.delivered {
			if c != pw.want[name] {
				t.Errorf("%s: podwatch delivered count %d for %s, want %d", st.name, c, name, pw.want[name])
			}
		}
		if pw.deliveredTotal() != int32(st.n) {
			t.Errorf("%s: podwatch delivered %d of %d", st.name, pw.deliveredTotal(), st.n)
		}
		if pw.creates != len(pw.delivered) {
			t.Errorf("%s: %d creates for %d Events", st.name, pw.creates, len(pw.delivered))
		}
		// At most one write per Event per KeyInterval, plus the first.
		span := time.Duration(st.n-1)*st.every + events.DefaultKeyInterval
		if limit := len(pw.delivered) * (1 + int(span/events.DefaultKeyInterval)); pw.writes() > limit {
			t.Errorf("%s: podwatch made %d writes, more than %d", st.name, pw.writes(), limit)
		}
		// Exactness would cost client-go one write per occurrence.
		if pw.writes() > st.n {
			t.Errorf("%s: podwatch made %d writes for %d occurrences", st.name, pw.writes(), st.n)
		}
		if cg.deliveredTotal() >= int32(st.n) {
			t.Errorf("%s: client-go delivered %d of %d: the spam filter should have dropped some", st.name, cg.deliveredTotal(), st.n)
		}
		if pw.writes() >= cg.writes() {
			t.Errorf("%s: podwatch made %d writes, client-go %d: want fewer, with exact counts", st.name, pw.writes(), cg.writes())
		}
	}
	t.Logf("write rates, simulated on a fake clock:\n%s", strings.Join(rows, "\n"))
}

func TestWriteRateBurstIsTwoWrites(t *testing.T) {
	t.Parallel()
	st := rateStreams()[2]
	pw, cg := simulatePodwatch(t, st, nil), simulateRecord(st)
	if pw.writes() != 2 || pw.deliveredTotal() != 1000 {
		t.Errorf("podwatch: %d writes, count %d; want 2 writes, count 1000", pw.writes(), pw.deliveredTotal())
	}
	if cg.writes() != 25 || cg.deliveredTotal() != 25 {
		t.Errorf("client-go: %d writes, count %d; want 25, 25 (the spam filter's burst)", cg.writes(), cg.deliveredTotal())
	}
}

// countingTransport counts HTTP requests by method.
type countingTransport struct {
	rt    http.RoundTripper
	total atomic.Int64
	mu    sync.Mutex
	by    map[string]int
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.total.Add(1)
	c.mu.Lock()
	if c.by == nil {
		c.by = map[string]int{}
	}
	c.by[req.Method]++
	c.mu.Unlock()
	return c.rt.RoundTrip(req)
}

func (c *countingTransport) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d requests %v", c.total.Load(), c.by)
}

// The same streams against the real API server through pkg/kube's sink:
// the requests on the wire, and the counts the API ends up with.
func TestWriteRateAgainstAPIServer(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	rows := []string{"| stream | HTTP requests | API writes (sink) | count in the API |", "|---|---|---|---|"}
	for _, st := range rateStreams()[:2] {
		ct := &countingTransport{}
		cfg := s.Config(apiserver.PodwatchToken)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { ct.rt = rt; return ct })
		client, err := kube.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The sink's clock is the real one: a pod Event's first write reads
		// the mirror pod. No kubelet makes one here, so no write waits for
		// it.
		sink, err := kube.NewSink(client, kube.SinkOptions{Node: node, MirrorWait: -1}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pw := simulatePodwatch(t, st, sink)
		var inAPI int32
		for name, want := range pw.want {
			ev, err := c.Events(eventNS(st)).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if ev.Count != want {
				t.Errorf("%s: Event %s has count %d in the API, want %d", st.name, name, ev.Count, want)
			}
			inAPI += ev.Count
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d of %d |", st.name, ct, pw.writes(), inAPI, st.n))
		if n := int(ct.total.Load()); n > pw.writes()+len(pw.want) { // + one mirror-pod get per pod Event
			t.Errorf("%s: %d HTTP requests for %d writes", st.name, n, pw.writes())
		}
	}
	t.Logf("against kube-apiserver %s:\n%s", apiserver.KubeVersion, strings.Join(rows, "\n"))
}

func eventNS(st rateStream) string {
	if ns := st.occ(0).Object.Namespace; ns != "" {
		return ns
	}
	return metav1.NamespaceDefault
}
