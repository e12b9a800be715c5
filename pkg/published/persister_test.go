package published

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/store"
)

// startPersister runs a persister on dir; stop cancels it and waits.
func startPersister(t *testing.T, dir string, log *slog.Logger) (p *Persister, stop func()) {
	t.Helper()
	p = NewPersister(dir, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return p, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("persister Run: %v", err)
		}
	}
}

func TestPersisterLeavesTheNewestState(t *testing.T) {
	dir := t.TempDir()
	p, stop := startPersister(t, dir, slog.New(slog.DiscardHandler))
	for i := range 200 {
		p.Save(diff.State{Reported: map[string]string{"n": strconv.Itoa(i)}, Salt: []byte("salt")})
	}
	stop()
	var got diff.State
	if err := store.LoadJSON(dir, StateFile, &got); err != nil {
		t.Fatal(err)
	}
	if got.Reported["n"] != "199" {
		t.Fatalf("state.json holds state %q after shutdown, want the newest, 199", got.Reported["n"])
	}
}

func TestPersisterFailureIsLoggedNotFatal(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testutil.LockedBuffer
	p, stop := startPersister(t, notADir, slog.New(slog.NewTextHandler(&logs, nil)))
	p.Save(diff.State{Salt: []byte("salt")})
	stop()
	if !strings.Contains(logs.String(), "cannot save published state") {
		t.Fatalf("no warning for a failed save; logs:\n%s", logs.String())
	}
}
