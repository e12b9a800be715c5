//go:build linux

package file

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSnapshot is the source's share of one watch event in a folder
// of n: building the snapshot it sends.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
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
			s.relist()
			_ = s.snapshot(true)
			b.ReportAllocs()
			for b.Loop() {
				_ = s.snapshot(false)
			}
		})
	}
}
