//go:build linux

package kubelet_test

import (
	"log/slog"
	"testing"
	"time"
)

// The timeline's view of podwatch's relist detector comes from its own log
// lines, as the text handler writes them; other lines are not sweeps.
func TestSweeps(t *testing.T) {
	p := &podwatch{changed: make(chan struct{}), logChanged: make(chan struct{})}
	log := slog.New(slog.NewTextHandler(logWriter{p}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	at := time.Date(2026, 12, 3, 13, 26, 19, 123e6, time.UTC)
	log.Debug("full read of the folder seen", "path", "/m", "at", at, "files", 3, "skipped", 0, "onPhase", true, "latency", 4*time.Millisecond)
	log.Info("kubelet relist phase known", "path", "/m", "period", 2*time.Second)
	log.Debug("full read of the folder broken off: no open for longer than the window after the one before",
		"path", "/m", "at", at, "opened", 0, "of", 3, "gap", 150*time.Millisecond, "next", "a.yaml")
	log.Debug("full read of the folder broken off: no open for longer than the window after the one before",
		"path", "/m", "at", at.Add(time.Second), "opened", 1, "of", 3, "gap", 150*time.Millisecond, "next", "b.yaml")
	got := p.sweeps()
	if len(got) != 2 {
		t.Fatalf("sweeps %+v, want 2", got)
	}
	if !got[0].at.Equal(at) || got[0].what != "seen onPhase=true latency=4ms" {
		t.Errorf("first sweep %v %q, want %v \"seen onPhase=true latency=4ms\"", got[0].at, got[0].what, at)
	}
	if want := "broken off: no open for longer than the window after the one before opened=1 of=3 gap=150ms next=b.yaml"; !got[1].at.Equal(at.Add(time.Second)) || got[1].what != want {
		t.Errorf("second sweep %v %q, want %q", got[1].at, got[1].what, want)
	}
}
