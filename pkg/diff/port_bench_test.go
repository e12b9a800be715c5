package diff

import (
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
	warm := func(b *testing.B, st *State, s types.Snapshot) {
		if chs, _ := Advance(st, s, t0.Add(time.Hour), opts); len(chs) != 0 {
			b.Fatalf("the first list: %d changes", len(chs))
		}
	}
	benchNamedChange(b, warm, func(st *State, next types.Snapshot) int {
		chs, _ := Advance(st, next, t0.Add(time.Hour), opts)
		return len(chs)
	})
}
