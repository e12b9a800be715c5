package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/source/file"
)

func TestAwaitSavedGivesUpAtTheDeadline(t *testing.T) {
	var logs testutil.LockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()                                  // the shutdown timeout has run out
	awaitSaved(ctx, make(chan struct{}), log) // a write that never ends
	if !strings.Contains(logs.String(), "published state not saved before --shutdown-timeout") {
		t.Fatalf("no warning for an unfinished save:\n%s", logs.String())
	}
	// A save that finished is not reported, even when the flush used up
	// the timeout.
	for range 20 {
		done := make(chan struct{})
		close(done)
		var quiet testutil.LockedBuffer
		awaitSaved(ctx, done, slog.New(slog.NewTextHandler(&quiet, nil)))
		if quiet.String() != "" {
			t.Fatalf("a finished save logged:\n%s", quiet.String())
		}
	}
}

// --file-check-frequency 0 means the default period, as the kubelet's
// config defaulting has it: the start log must say the period the source
// lists at, not 0s.
func TestStartLogShowsTheFileCheckFrequencyInUse(t *testing.T) {
	for _, tt := range []struct {
		freq, settle time.Duration
		want         string
	}{
		{0, 0, "fileCheckFrequency=20s settleDelay=1s"},
		{7 * time.Second, 250 * time.Millisecond, "fileCheckFrequency=7s settleDelay=250ms"},
	} {
		o := DefaultOptions()
		o.NodeName = "node-1"
		o.Source.Path = t.TempDir()
		o.Source.FileCheckFrequency = tt.freq
		o.Source.SettleDelay = tt.settle
		o.StateDir = t.TempDir()
		o.Metrics.BindAddress = "0"
		var logs testutil.LockedBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- New(o, Env{Clock: clock.RealClock{}, Log: slog.New(slog.NewTextHandler(&logs, nil))}).Run(ctx)
		}()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), "podwatch starting") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // the log is the only signal that Run has started
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		start := ""
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "podwatch starting") {
				start = line
			}
		}
		if !strings.Contains(start, " "+tt.want+" ") {
			t.Errorf("--file-check-frequency %v --settle-delay %v: start log %q, want %s", tt.freq, tt.settle, start, tt.want)
		}
	}
}

// --settle-delay 0 is one value for the file source and for the diff: the
// default, not the source's default and no delay in the diff.
func TestSettleDelayZeroIsOneValue(t *testing.T) {
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.Source.Path = t.TempDir()
	o.Source.SettleDelay = 0
	o.StateDir = t.TempDir()
	p, err := New(o, Env{}).build(context.Background(), metrics.New("test", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	src, diff := p.src.Options().SettleDelay, p.loop.opts.SettleDelay
	if src != file.DefaultSettleDelay || diff != src {
		t.Errorf("--settle-delay 0: the file source settles for %v and the diff for %v, want %v for both", src, diff, file.DefaultSettleDelay)
	}
}
