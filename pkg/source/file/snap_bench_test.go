//go:build linux

package file

import (
	"fmt"
	"testing"
)

// BenchmarkSnapshot is the source's share of one watch event in a folder
// of n: building the snapshot it sends.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			s := benchSource(b, n)
			s.relist()
			_ = s.snapshot(true, false)
			b.ReportAllocs()
			for b.Loop() {
				_ = s.snapshot(false, false)
			}
		})
	}
}
