package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"

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
