package diff

import (
	"fmt"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/source/file"
)

// BenchmarkComputeOneChange is the diff's share of one changed manifest in
// a folder of n: what a watch event costs beside the file read.
func BenchmarkComputeOneChange(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			files := make([]file.File, n)
			for i := range files {
				files[i] = valid(fmt.Sprintf("pod-%05d.yaml", i), pod(fmt.Sprintf("pod-%05d", i), "img:1"), t0)
			}
			st := publishedState(b, snap(true, files...))
			versions := [2]file.File{
				valid(files[0].Name, pod("pod-00000", "img:2"), t0),
				valid(files[0].Name, pod("pod-00000", "img:1"), t0),
			}
			b.ResetTimer()
			for i := range b.N {
				files[0] = versions[i%2]
				chs, next, _ := Compute(st, snap(false, files...), t0.Add(time.Hour), testOpts)
				if len(chs) != 1 {
					b.Fatalf("changes = %d", len(chs))
				}
				st = next
			}
		})
	}
}

// BenchmarkScrubbedOneChange is what the state written after one change of
// a published pod among n costs to prepare: one pod scrubbed again, the
// others taken from the cache.
func BenchmarkScrubbedOneChange(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			files := make([]file.File, n)
			for i := range files {
				files[i] = valid(fmt.Sprintf("pod-%05d.yaml", i), pod(fmt.Sprintf("pod-%05d", i), "img:1", withSecrets("s")), t0)
			}
			states := [2]State{publishedState(b, snap(true, files...)), {}}
			files[0] = valid(files[0].Name, pod("pod-00000", "img:2", withSecrets("s")), t0)
			states[1] = publishedState(b, snap(true, files...))
			var cache ScrubCache
			for i := range states {
				states[i].Salt = testSalt
				if _, err := states[i].Scrubbed(&cache); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := states[i%2].Scrubbed(&cache); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
