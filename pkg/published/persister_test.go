package published

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/store"
)

// startPersister runs a persister on dir; stop cancels it and waits.
func startPersister(t *testing.T, dir string, log *slog.Logger) (p *Persister, stop func()) {
	t.Helper()
	return startPersisterWith(t, NewPersister(dir, clock.RealClock{}, log, nil))
}

func startPersisterWith(t *testing.T, p *Persister) (*Persister, func()) {
	t.Helper()
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

type status struct {
	saved bool
	err   error
}

// A save that failed (the disk full, the dir gone) is tried again on its
// own: the state on disk converges once the disk allows, with no further
// change to hand over.
func TestPersisterRetriesUntilSaved(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	if err := os.WriteFile(dir, nil, 0o600); err != nil { // not a dir: every save fails
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	statuses := make(chan status, 16)
	var logs testutil.LockedBuffer
	p := NewPersister(dir, clk, slog.New(slog.NewTextHandler(&logs, nil)), func(saved bool, err error) { statuses <- status{saved, err} })
	_, stop := startPersisterWith(t, p)
	defer stop()
	want := diff.State{Reported: map[string]string{"n": "1"}, Salt: []byte("salt")}
	p.Save(want)
	if st := nextStatus(t, statuses); st.saved || st.err == nil {
		t.Fatalf("first save: %+v, want a failure", st)
	}
	// Still failing: the retry fails again, and is not logged twice.
	waitTimer(t, clk)
	clk.Step(retryInitial)
	if st := nextStatus(t, statuses); st.saved {
		t.Fatalf("second save: %+v, want a failure", st)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	waitTimer(t, clk)
	clk.Step(RetryMax)
	if st := nextStatus(t, statuses); !st.saved {
		t.Fatalf("save after the disk recovered: %+v", st)
	}
	var got diff.State
	if err := store.LoadJSON(dir, StateFile, &got); err != nil {
		t.Fatal(err)
	}
	if got.Reported["n"] != "1" {
		t.Fatalf("state.json holds %v", got.Reported)
	}
	if n := strings.Count(logs.String(), "cannot save published state"); n != 1 {
		t.Errorf("%d warnings for one failing episode, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "published state saved again") {
		t.Errorf("no word of the recovery:\n%s", logs.String())
	}
}

func nextStatus(t *testing.T, ch <-chan status) status {
	t.Helper()
	select {
	case st := <-ch:
		return st
	case <-time.After(10 * time.Second):
		t.Fatal("no save attempt")
		return status{}
	}
}

// waitTimer waits until the persister has armed its retry timer.
func waitTimer(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("no retry armed")
		}
		time.Sleep(time.Millisecond)
	}
}
