package diff

import (
	"slices"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// BenchmarkAdvanceOneChangePort is BenchmarkAdvanceOneChange under the
// port engine: one watch event's window explored and folded. The port's
// first list of the folder is taken before the timer starts, as the
// agent takes it once at its start.
func BenchmarkAdvanceOneChangePort(b *testing.B) {
	opts := testOpts
	opts.Engine = EnginePort
	benchFolders(b, func(b *testing.B, s types.Snapshot, st State) {
		if chs, _ := Advance(&st, s, t0.Add(time.Hour), opts); len(chs) != 0 {
			b.Fatalf("the first list: %d changes", len(chs))
		}
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
			if chs, _ := Advance(&st, next, t0.Add(time.Hour), opts); len(chs) != 1 {
				b.Fatalf("changes = %d", len(chs))
			}
			s = next
		}
	})
}
