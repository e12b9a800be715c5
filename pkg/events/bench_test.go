package events

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

// The comparison benchmarks feed podwatch's Recorder and client-go's
// record.EventCorrelator the same streams on a fake clock that moves 1 ms
// per event. client-go gets a ready *v1.Event, as its recorder would hand
// it; podwatch gets an Occurrence and builds nothing until a sink needs it.
// podwatch has one delivered sink that never runs, so its queue
// bookkeeping is in the cost.

func benchOcc(i int, unique bool) Occurrence {
	o := Occurrence{Object: PodRef("kube-system", "etcd-node-1"), Type: "Warning",
		Reason: "InvalidManifest", Message: "etcd.yaml: line 12: unknown field \"spec.containers[0].imagePullPolicyy\"", File: "etcd.yaml"}
	if unique {
		o.Object.Name = fmt.Sprintf("pod-%d-node-1", i)
	}
	return o
}

func clientGoEvent(o Occurrence, now time.Time) *v1.Event {
	t := metav1.NewTime(now)
	return &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", o.Object.Name, now.UnixNano()), Namespace: eventNamespace(o.Object)},
		InvolvedObject: o.Object, Reason: o.Reason, Message: o.Message, Type: o.Type,
		Source: v1.EventSource{Component: Component, Host: "node-1"}, FirstTimestamp: t, LastTimestamp: t, Count: 1,
	}
}

func BenchmarkCorrelate(b *testing.B) {
	for _, stream := range []string{"repeated", "unique"} {
		unique := stream == "unique"
		// 16,384 objects cycled through caches of 4,096: every one a miss.
		occs := make([]Occurrence, 1)
		if unique {
			occs = make([]Occurrence, 4*DefaultCacheSize)
		}
		for i := range occs {
			occs[i] = benchOcc(i, unique)
		}
		b.Run(stream+"/podwatch", func(b *testing.B) {
			clk := clocktesting.NewFakeClock(t0)
			r, err := New(Options{Host: "node-1"}, clk, nil, []Registration{DeliverTo("api", &fakeSink{})}, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := r.Record(ctx, occs[i%len(occs)]); err != nil {
					b.Fatal(err)
				}
				clk.Step(time.Millisecond)
			}
		})
		b.Run(stream+"/client-go", func(b *testing.B) {
			clk := clocktesting.NewFakeClock(t0)
			c := record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: clk})
			evs := make([]*v1.Event, len(occs))
			for i := range evs {
				evs[i] = clientGoEvent(occs[i], t0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := c.EventCorrelate(evs[i%len(evs)]); err != nil {
					b.Fatal(err)
				}
				clk.Step(time.Millisecond)
			}
		})
	}
}

// BenchmarkStorm sends 100,000 identical occurrences, at once or 1 ms apart
// (a 100 s storm), and
// reports how many writes reach a delivered sink and the count the last
// one carries; client-go's correlator on the same stream for contrast.
func BenchmarkStorm(b *testing.B) {
	const n = 100_000
	o := benchOcc(0, false)
	for _, gap := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("podwatch/gap=%v", gap), func(b *testing.B) {
			var writes, final float64
			for range b.N {
				w, c := podwatchStorm(b, o, n, gap)
				writes, final = float64(w), float64(c)
			}
			b.ReportMetric(writes, "writes")
			b.ReportMetric(final, "final-count")
		})
	}
	b.Run("client-go", func(b *testing.B) {
		var writes, final float64
		for range b.N {
			clk := clocktesting.NewFakeClock(t0)
			c := record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: clk})
			writes, final = 0, 0
			for range n {
				res, err := c.EventCorrelate(clientGoEvent(o, clk.Now()))
				if err != nil {
					b.Fatal(err)
				}
				if !res.Skip {
					writes++
					final = float64(res.Event.Count)
				}
				clk.Step(time.Millisecond)
			}
		}
		b.ReportMetric(writes, "writes")
		b.ReportMetric(final, "final-count")
	})
}

// podwatchStorm runs Run and n Records gap apart on a fake clock, then
// Flush, and returns the sink's writes and the last count written.
func podwatchStorm(tb testing.TB, o Occurrence, n int, gap time.Duration) (writes int, final int32) {
	clk := clocktesting.NewFakeClock(t0)
	api := &fakeSink{}
	r, err := New(Options{Host: "node-1"}, clk, nil, []Registration{DeliverTo("api", api)}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for range n {
		if err := r.Record(ctx, o); err != nil {
			tb.Fatal(err)
		}
		clk.Step(gap)
	}
	cancel()
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	if err := r.Flush(context.Background()); err != nil {
		tb.Fatal(err)
	}
	ws := api.got()
	return len(ws), ws[len(ws)-1].ev.Count
}

// BenchmarkMillionUnique records 1,000,000 distinct Events into a Recorder
// whose delivered sink is stalled (Run never started), the worst case for
// memory, and reports the peak HeapInuse seen every 10,000 events.
func BenchmarkMillionUnique(b *testing.B) {
	const n = 1_000_000
	var peak uint64
	for range b.N {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		clk := clocktesting.NewFakeClock(t0)
		r, err := New(Options{Host: "node-1"}, clk, nil, []Registration{DeliverTo("api", &fakeSink{})}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for i := range n {
			o := Occurrence{Object: PodRef("default", fmt.Sprintf("pod-%d", i)), Type: "Warning",
				Reason: "InvalidManifest", Message: fmt.Sprintf("pod-%d.yaml: line 3: bad", i), File: fmt.Sprintf("pod-%d.yaml", i)}
			if err := r.Record(ctx, o); err != nil {
				b.Fatal(err)
			}
			if i%10_000 == 0 {
				clk.Step(time.Millisecond)
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse-min(base, ms.HeapInuse))
			}
		}
		if st := r.Stats(); st.Events != DefaultCacheSize || st.Sinks[0].Pending != DefaultPendingMax {
			b.Fatalf("stats %+v: the bounds did not hold", st)
		}
		runtime.KeepAlive(r)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkRecordChange is the cost a change's identity adds per
// occurrence: Record of a pod change with and without Change set, with
// replay candidates restored for other pods (the check after a restart),
// and the Event built for a sink, with its AnnotationChange.
func BenchmarkRecordChange(b *testing.B) {
	var restore []v1.Event
	for i := range 1000 {
		at := t0.Add(-time.Minute)
		e := &entry{object: PodRef("kube-system", fmt.Sprintf("other-%d-node-1", i)), typ: "Normal", reason: "StaticPodUpdated",
			message: "m", name: eventName("other", at.UnixNano()+int64(i)), first: at, last: at, count: 1, change: "id", mark: changeMark(uint64(i+1), "id")}
		restore = append(restore, *e.event("node-1"))
	}
	for _, variant := range []string{"without", "with"} {
		b.Run(variant, func(b *testing.B) {
			clk := clocktesting.NewFakeClock(t0)
			r, err := New(Options{Host: "node-1"}, clk, nil, []Registration{DeliverTo("api", &fakeSink{})}, restore)
			if err != nil {
				b.Fatal(err)
			}
			occs := make([]Occurrence, 2)
			for i := range occs {
				occs[i] = Occurrence{Object: PodRef("kube-system", "web-node-1"), Type: "Normal", Reason: "StaticPodUpdated",
					Message: fmt.Sprintf("web.yaml: image: a -> b (%d)", i)}
				if variant == "with" {
					occs[i].Change = fmt.Sprintf("change-%d", i)
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := r.Record(ctx, occs[i%2]); err != nil {
					b.Fatal(err)
				}
				clk.Step(time.Millisecond)
			}
		})
	}
	for _, variant := range []string{"event-without", "event-with"} {
		b.Run(variant, func(b *testing.B) {
			e := &entry{object: PodRef("kube-system", "web-node-1"), typ: "Normal", reason: "StaticPodUpdated",
				message: "web.yaml: image: a -> b", name: "web-node-1.1", first: t0, last: t0, count: 3}
			if variant == "event-with" {
				e.change, e.mark = "0123456789abcdefghijkl", changeMark(12345, "0123456789abcdefghijkl")
			}
			b.ReportAllocs()
			for range b.N {
				_ = e.event("node-1")
			}
		})
	}
}
