package metrics

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// goFamilies are the Go runtime's go_* metrics under the names and types
// Prometheus's Go collector gives them, so that dashboards and rules made
// for Go programs read podwatch's too.
func goFamilies() []family {
	memstats := func(name, help, typ string, f func(*runtime.MemStats) float64) family {
		return newCollectorFunc("go_memstats_"+name, help, typ, nil, func(emit func(float64, ...string)) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			emit(f(&ms))
		})
	}
	sample := func(name, help, metric string) family {
		return newCollectorFunc(name, help, typeGauge, nil, func(emit func(float64, ...string)) {
			s := []metrics.Sample{{Name: metric}}
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 {
				emit(float64(s[0].Value.Uint64()))
			}
		})
	}
	return []family{
		&gcDurations{meta: meta{name: "go_gc_duration_seconds", typ: typeSummary,
			help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."}},
		newCollectorFunc("go_goroutines", "Number of goroutines that currently exist.", typeGauge, nil,
			func(emit func(float64, ...string)) { emit(float64(runtime.NumGoroutine())) }),
		newCollectorFunc("go_threads", "Number of OS threads created.", typeGauge, nil,
			func(emit func(float64, ...string)) {
				n, _ := runtime.ThreadCreateProfile(nil)
				emit(float64(n))
			}),
		newCollectorFunc("go_info", "Information about the Go environment.", typeGauge, []string{"version"},
			func(emit func(float64, ...string)) { emit(1, runtime.Version()) }),
		sample("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100.", "/gc/gogc:percent"),
		sample("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", "/gc/gomemlimit:bytes"),
		sample("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.", "/sched/gomaxprocs:threads"),
		memstats("alloc_bytes", "Number of heap bytes allocated and currently in use.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.Alloc) }),
		memstats("alloc_bytes_total", "Total number of heap bytes allocated, even if freed.", typeCounter, func(m *runtime.MemStats) float64 { return float64(m.TotalAlloc) }),
		memstats("sys_bytes", "Number of bytes obtained from system.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.Sys) }),
		memstats("mallocs_total", "Total number of heap objects allocated.", typeCounter, func(m *runtime.MemStats) float64 { return float64(m.Mallocs) }),
		memstats("frees_total", "Total number of heap objects frees.", typeCounter, func(m *runtime.MemStats) float64 { return float64(m.Frees) }),
		memstats("heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.HeapAlloc) }),
		memstats("heap_sys_bytes", "Number of heap bytes obtained from system.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.HeapSys) }),
		memstats("heap_idle_bytes", "Number of heap bytes waiting to be used.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.HeapIdle) }),
		memstats("heap_inuse_bytes", "Number of heap bytes that are in use.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.HeapInuse) }),
		memstats("heap_released_bytes", "Number of heap bytes released to OS.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.HeapReleased) }),
		memstats("heap_objects", "Number of currently allocated objects.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.HeapObjects) }),
		memstats("stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.StackInuse) }),
		memstats("stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.StackSys) }),
		memstats("mspan_inuse_bytes", "Number of bytes in use by mspan structures.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.MSpanInuse) }),
		memstats("mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.MSpanSys) }),
		memstats("mcache_inuse_bytes", "Number of bytes in use by mcache structures.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.MCacheInuse) }),
		memstats("mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.MCacheSys) }),
		memstats("buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.BuckHashSys) }),
		memstats("gc_sys_bytes", "Number of bytes used for garbage collection system metadata.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.GCSys) }),
		memstats("other_sys_bytes", "Number of bytes used for other system allocations.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.OtherSys) }),
		memstats("next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.NextGC) }),
		memstats("last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", typeGauge, func(m *runtime.MemStats) float64 { return float64(m.LastGC) / 1e9 }),
	}
}

// gcDurations is go_gc_duration_seconds: the quantiles of the recent GC
// pauses, their sum and count.
type gcDurations struct{ meta }

func (g *gcDurations) collect(emit func(string, []string, float64)) {
	st := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&st)
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		emit("", []string{"quantile", q}, st.PauseQuantiles[i].Seconds())
	}
	emit("_sum", nil, st.PauseTotal.Seconds())
	emit("_count", nil, float64(st.NumGC))
}
