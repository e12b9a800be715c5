package diff

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// BenchmarkComputeOneChange is the diff's share of one changed manifest in
// a folder of n: what a watch event costs beside the file read.
func BenchmarkComputeOneChange(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			files := make([]types.File, n)
			for i := range files {
				files[i] = valid(fmt.Sprintf("pod-%05d.yaml", i), pod(fmt.Sprintf("pod-%05d", i), "img:1"), t0)
			}
			st := publishedState(b, snap(true, files...))
			versions := [2]types.File{
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

// BenchmarkScrubbedPod is what writing one changed pod to disk costs
// beside the write: decode, scrub, encode.
func BenchmarkScrubbedPod(b *testing.B) {
	p := published(&types.File{Name: "a.yaml", Pod: pod("a", "img:1", withSecrets("s"))})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ScrubbedPod(p, testSalt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIncrementalOneChange is BenchmarkComputeOneChange with snapshots
// that name what they changed, as the file source's do.
func BenchmarkIncrementalOneChange(b *testing.B) {
	benchNamedChange(b, func(st *State, next types.Snapshot) int {
		chs, st2, _ := Compute(*st, next, t0.Add(time.Hour), testOpts)
		*st = st2
		return len(chs)
	})
}

// BenchmarkAdvanceOneChange is BenchmarkIncrementalOneChange for the
// agent's loop, which advances one State in place.
func BenchmarkAdvanceOneChange(b *testing.B) {
	benchNamedChange(b, func(st *State, next types.Snapshot) int {
		chs, _ := Advance(st, next, t0.Add(time.Hour), testOpts)
		return len(chs)
	})
}

// benchNamedChange flips one file's image back and forth in folders of
// several sizes, each snapshot naming the file it changed, and steps the
// state with step, which returns how many changes it made.
func benchNamedChange(b *testing.B, step func(st *State, next types.Snapshot) int) {
	benchFolders(b, func(b *testing.B, s types.Snapshot, st State) {
		name := s.Files[0].Name
		versions := [2]types.File{
			valid(name, pod("pod-00000", "img:2"), t0),
			valid(name, pod("pod-00000", "img:1"), t0),
		}
		changed := []string{name}
		b.ResetTimer()
		for i := range b.N {
			next := s
			next.Files = slices.Clone(s.Files)
			next.Files[0] = &versions[i%2]
			next.Seq, next.Relist, next.Changed = s.Seq+1, false, changed
			if got := step(&st, next); got != 1 {
				b.Fatalf("changes = %d", got)
			}
			s = next
		}
	})
}

// benchFolders runs body on folders of 1, 1,000 and 10,000 valid
// manifests (pod-00000.yaml on), each listed: its snapshot (Seq 1), and
// the state with it published.
func benchFolders(b *testing.B, body func(b *testing.B, s types.Snapshot, st State)) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			files := make([]types.File, n)
			for i := range files {
				files[i] = valid(fmt.Sprintf("pod-%05d.yaml", i), pod(fmt.Sprintf("pod-%05d", i), "img:1"), t0)
			}
			s := snap(true, files...)
			s.Seq = 1
			body(b, s, publishedState(b, s))
		})
	}
}

// BenchmarkAdvanceKubeletRelist is a relist period of the agent's loop in
// folders of several sizes: one file's image flipped on the watch just
// after the kubelet's relist opened the folder, then that relist taken in
// (the kubelet's view replaces its store, and keeps the watch's content
// after the relist for the next one).
func BenchmarkAdvanceKubeletRelist(b *testing.B) {
	benchFolders(b, func(b *testing.B, s types.Snapshot, st State) {
		name := s.Files[0].Name
		images := [2]string{"img:2", "img:1"}
		changed := []string{name}
		b.ResetTimer()
		for i := range b.N {
			relist := t0.Add(time.Duration(i+1) * 2 * time.Second)
			f := valid(name, pod("pod-00000", images[i%2]), relist.Add(100*time.Millisecond))
			next := s
			next.Files = slices.Clone(s.Files)
			next.Files[0] = &f
			next.Seq, next.Relist, next.Changed, next.Time = s.Seq+1, false, changed, f.ChangedAt
			if chs, _ := Advance(&st, next, f.ChangedAt.Add(time.Hour), testOpts); len(chs) != 1 {
				b.Fatalf("the watch's change: %d changes", len(chs))
			}
			next.KubeletRelist, next.Time = relist, relist.Add(750*time.Millisecond)
			Advance(&st, next, next.Time.Add(time.Hour), testOpts)
			s = next
		}
	})
}
