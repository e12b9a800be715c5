package backoff

import (
	"strconv"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// BenchmarkCycle runs the calls a delivered sink makes per write: a check
// of the wait left, a failure and its retry delay, then a success.
func BenchmarkCycle(b *testing.B) {
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = "pod-" + strconv.Itoa(i) + ".17f0a1b2c3d4e5f6"
	}
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	bo := New(clk, DefaultInitial, DefaultMax).WithJitter(0.2, func() float64 { return 0.5 })
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := ids[i%len(ids)]
		bo.Remaining(id)
		bo.Next(id)
		bo.Get(id)
		if i%4 == 3 {
			bo.Reset(id)
		}
	}
}
