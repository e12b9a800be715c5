//go:build linux

package file

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSource is a Source on a fresh folder of n manifests, not listed yet.
func benchSource(b *testing.B, n int) *Source {
	b.Helper()
	dir := b.TempDir()
	for i := range n {
		name := fmt.Sprintf("pod-%05d.yaml", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(podYAML(fmt.Sprintf("pod-%05d", i), "img")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(Options{Path: dir, NodeName: testNode}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkRelistUnchanged measures the periodic relist of a directory where
// nothing changed: a readdir, one stat per file, no open, no decode.
func BenchmarkRelistUnchanged(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			s := benchSource(b, n)
			// The steady state: files older than racyWindow, whose identity
			// is trusted.
			s.wallNow = func() time.Time { return time.Now().Add(time.Hour) }
			opens := countOpens(s)
			s.relist()
			if len(s.cache) != n || opens.Load() != int64(n) {
				b.Fatalf("first list: %d files, %d opens", len(s.cache), opens.Load())
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for b.Loop() {
				s.relist()
				_ = s.snapshot(true, false)
			}
			b.StopTimer()
			// CPU time of the whole process (GC included) is the budget the
			// target is about; wall time also counts waiting on a busy host.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/file")
			if opens.Load() != int64(n) {
				b.Fatalf("unchanged relists opened %d files", opens.Load()-int64(n))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/file")
		})
	}
}
