package manifest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// heapObjects is the runtime's count of bytes in live and not yet swept
// heap objects: what a decode holds at one moment.
const heapObjects = "/memory/classes/heap/objects:bytes"

// peakHeap runs f once and returns the most heap it held above what was
// live before, sampled every 100 µs. A sample can miss a spike shorter than
// that, so it is meant for decodes that last many samples, as the large
// inputs below do.
func peakHeap(f func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var stop atomic.Bool
	var peak uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		ss := []metrics.Sample{{Name: heapObjects}}
		for !stop.Load() {
			metrics.Read(ss)
			peak = max(peak, ss[0].Value.Uint64())
			time.Sleep(100 * time.Microsecond)
		}
	}()
	f()
	stop.Store(true)
	<-done
	return peak - min(base, peak)
}

// manyLabels is a valid manifest of n labels: 640,000 make 9.8 MiB.
func manyLabels(n int, value string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n")
	for i := range n {
		fmt.Fprintf(&b, "    l%07d: %s\n", i, value)
	}
	b.WriteString("spec:\n  containers:\n  - name: a\n    image: b\n")
	return b.String()
}

// aliased is a manifest whose container args hold an anchor of size bytes
// and n aliases of it.
func aliased(size, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n")
	b.WriteString("spec:\n  containers:\n  - name: a\n    image: b\n    args: [&big " + strings.Repeat("x", size))
	for range n {
		b.WriteString(", *big")
	}
	b.WriteString("]\n")
	return b.String()
}

// BenchmarkDecodePeakHeap reports the peak heap of one Decode of hostile
// or huge input (peak-MiB), beside its time and allocations: the memory that
// the alias cap (maxExpanded) and treeMax are there to bound.
func BenchmarkDecodePeakHeap(b *testing.B) {
	for _, tc := range []struct {
		name  string
		data  string
		valid bool
	}{
		{"billion-laughs", billionLaughs(), false},
		{"alias-19MiB-expanded-small-file", aliased(190<<10, 100), true},
		{"alias-19MiB-expanded-1.1MiB-file", aliased(1100<<10, 17), true},
		{"alias-bomb-500MiB-expanded", aliased(5<<20, 100), false},
		{"labels-9.8MiB", manyLabels(640000, "v"), true},
		{"labels-8.6MiB-with-a-star", strings.Replace(manyLabels(560000, "v"), "image: b", "image: b\n    args: [\"*\"]", 1), true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			data := []byte(tc.data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					_, err := Decode(data, Options{NodeName: testNode})
					if (err == nil) != tc.valid {
						b.Fatalf("valid %v, err %v", tc.valid, err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		})
	}
	// The kubelet's own decode of the same 9.8 MiB (to JSON, then into a
	// v1.Pod), for scale: podwatch cannot need less than this.
	b.Run("labels-9.8MiB-kubelet-steps", func(b *testing.B) {
		data := []byte(manyLabels(640000, "v"))
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakHeap(func() {
				js, err := utilyaml.ToJSON(data)
				if err != nil {
					b.Fatal(err)
				}
				if err := json.Unmarshal(js, &v1.Pod{}); err != nil {
					b.Fatal(err)
				}
			}))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	})
}
