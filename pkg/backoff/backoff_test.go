package backoff

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestSequenceDoublesToMax(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	b := New(clk, DefaultInitial, DefaultMax)
	want := []time.Duration{1, 2, 4, 8, 16, 20, 20, 20}
	for i, w := range want {
		got := b.Next("watch")
		if got != w*time.Second {
			t.Fatalf("failure %d: delay %v, want %v", i+1, got, w*time.Second)
		}
		if b.Get("watch") != got {
			t.Fatalf("Get after failure %d = %v, want %v", i+1, b.Get("watch"), got)
		}
		// The next failure comes right after the delay ran out, well inside 40 s.
		clk.SetTime(clk.Now().Add(got))
	}
}

func TestStateForgottenAfterTwiceMax(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	b := New(clk, time.Second, 20*time.Second)
	for range 5 {
		b.Next("watch")
	}
	if got := b.Get("watch"); got != 16*time.Second {
		t.Fatalf("after 5 failures delay = %v, want 16s", got)
	}
	clk.SetTime(clk.Now().Add(40 * time.Second))
	if got := b.Next("watch"); got != 20*time.Second {
		t.Fatalf("exactly 40 s later the state still counts: delay %v, want 20s", got)
	}
	clk.SetTime(clk.Now().Add(40*time.Second + time.Nanosecond))
	if got := b.Get("watch"); got != 0 {
		t.Fatalf("Get after 40 s idle = %v, want 0", got)
	}
	if got := b.Next("watch"); got != time.Second {
		t.Fatalf("first failure after 40 s idle: delay %v, want 1s", got)
	}
}

func TestRemainingAndReset(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	b := New(clk, time.Second, 20*time.Second)
	if got := b.Remaining("a"); got != 0 {
		t.Fatalf("Remaining of unknown id = %v, want 0", got)
	}
	b.Next("a")
	b.Next("a") // 2 s
	clk.SetTime(clk.Now().Add(500 * time.Millisecond))
	if got := b.Remaining("a"); got != 1500*time.Millisecond {
		t.Fatalf("Remaining = %v, want 1.5s", got)
	}
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if got := b.Remaining("a"); got != 0 {
		t.Fatalf("Remaining after delay = %v, want 0", got)
	}
	b.Reset("a")
	if got := b.Next("a"); got != time.Second {
		t.Fatalf("delay after Reset = %v, want 1s", got)
	}
}

func TestIDsAreIndependentAndGC(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	b := New(clk, time.Second, 20*time.Second)
	b.Next("a")
	b.Next("a")
	if got := b.Next("b"); got != time.Second {
		t.Fatalf("b's first delay = %v, want 1s (a's state leaked)", got)
	}
	clk.SetTime(clk.Now().Add(30 * time.Second))
	b.Next("b")
	clk.SetTime(clk.Now().Add(15 * time.Second))
	b.GC()
	if b.Len() != 1 || b.Get("b") == 0 {
		t.Fatalf("GC kept %d entries (b=%v), want only b", b.Len(), b.Get("b"))
	}
}

func TestDefaultsForNonPositive(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	b := New(clk, 0, -1)
	if got := b.Next("x"); got != DefaultInitial {
		t.Fatalf("delay = %v, want %v", got, DefaultInitial)
	}
	b = New(clk, 5*time.Second, time.Second)
	b.Next("x")
	if got := b.Next("x"); got != 5*time.Second {
		t.Fatalf("max below initial: delay = %v, want 5s", got)
	}
}

func TestJitterLengthensEveryWait(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	b := New(clk, time.Second, 4*time.Second).WithJitter(0.2, func() float64 { return 0.5 })
	for _, want := range []time.Duration{1100 * time.Millisecond, 2200 * time.Millisecond, 4400 * time.Millisecond, 4400 * time.Millisecond} {
		if got := b.Next("a"); got != want {
			t.Fatalf("Next = %v, want %v", got, want)
		}
	}
	if got := b.Get("a"); got != 4400*time.Millisecond {
		t.Errorf("Get = %v, want the jittered 4.4s", got)
	}
	clk.SetTime(clk.Now().Add(4 * time.Second))
	if got := b.Remaining("a"); got != 400*time.Millisecond {
		t.Errorf("Remaining = %v, want 400ms of the jittered wait", got)
	}
	// The reset after 2 × max still counts from the last failure.
	clk.SetTime(clk.Now().Add(8 * time.Second))
	if got := b.Next("a"); got != 1100*time.Millisecond {
		t.Errorf("Next after the reset = %v, want 1.1s", got)
	}
	// No jitter without a source.
	if got := New(clk, time.Second, 4*time.Second).WithJitter(0.2, nil).Next("a"); got != time.Second {
		t.Errorf("Next without a source = %v, want 1s", got)
	}
}

// readingClock moves on by step after every reading, as a real clock does
// between two calls.
type readingClock struct {
	t    time.Time
	step time.Duration
}

func (c *readingClock) Now() time.Time {
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

func (c *readingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func TestNextForgetsWhenGetDoes(t *testing.T) {
	clk := &readingClock{t: time.Unix(1000, 0), step: time.Millisecond}
	b := New(clk, time.Second, 20*time.Second)
	b.Next("a")
	failed := clk.t
	b.Next("a") // 2 s, on the reading at failed
	clk.t = failed.Add(40*time.Second + time.Nanosecond)
	if got := b.Get("a"); got != 0 {
		t.Fatalf("Get just past 40 s = %v, want 0", got)
	}
	clk.t = failed.Add(40*time.Second + time.Nanosecond)
	if got := b.Next("a"); got != time.Second {
		t.Fatalf("Next just past 40 s = %v, want 1s: Next and Get disagree on forgetting", got)
	}
}
