package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
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
		freq time.Duration
		want string
	}{
		{0, "fileCheckFrequency=20s"},
		{7 * time.Second, "fileCheckFrequency=7s"},
	} {
		o := DefaultOptions()
		o.NodeName = "node-1"
		o.Source.Path = t.TempDir()
		o.Source.FileCheckFrequency = tt.freq
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
			t.Errorf("--file-check-frequency %v: start log %q, want %s", tt.freq, start, tt.want)
		}
	}
}
