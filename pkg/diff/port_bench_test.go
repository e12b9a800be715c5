package diff

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// BenchmarkAdvanceOneChangePort is BenchmarkAdvanceOneChange under the
// port engine: the window of one watch event explored and folded.
func BenchmarkAdvanceOneChangePort(b *testing.B) {
	opts := testOpts
	opts.Engine = EnginePort
	benchNamedChange(b, func(st *State, next types.Snapshot) int {
		chs, _ := Advance(st, next, t0.Add(time.Hour), opts)
		return len(chs)
	})
}
