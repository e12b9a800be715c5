package file

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// The fake clock moves one second per decode, so the duration a list
// reports is exactly the decodes it did.
func TestRelistReportsDurationAndEntriesListed(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.yaml", "b.yaml", ".hidden.yaml"} {
		writeFile(t, filepath.Join(dir, n), podYAML("p"+n[1:2], "img"))
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newTestSource(t, dir, clk)
	s.decode = func(data []byte, o manifest.Options) (*types.Pod, error) {
		clk.Step(time.Second)
		return manifest.Decode(data, o)
	}

	s.relist()
	snap := s.snapshot(true, false)
	// Dot names are listed (read from the directory) though never manifests.
	if snap.ListDuration != 2*time.Second || snap.Listed != 3 || len(snap.Files) != 2 {
		t.Errorf("first list: duration %v listed %d files %d, want 2s 3 2", snap.ListDuration, snap.Listed, len(snap.Files))
	}
	s.relist()
	if snap := s.snapshot(true, false); snap.ListDuration != 0 || snap.Listed != 3 {
		t.Errorf("unchanged relist: duration %v listed %d, want 0 3 (nothing re-read)", snap.ListDuration, snap.Listed)
	}
	if snap := s.snapshot(false, false); snap.ListDuration != 0 || snap.Listed != 0 {
		t.Errorf("watch snapshot: duration %v listed %d, want zero", snap.ListDuration, snap.Listed)
	}

	single := newTestSource(t, filepath.Join(dir, "a.yaml"), nil)
	single.relist()
	if snap := single.snapshot(true, false); snap.Listed != 1 {
		t.Errorf("single file: listed %d, want 1", snap.Listed)
	}

	missing := newTestSource(t, filepath.Join(dir, "nope"), nil)
	missing.relist()
	if snap := missing.snapshot(true, false); snap.Listed != 0 || snap.PathErr == nil {
		t.Errorf("missing path: listed %d pathErr %v, want 0 and an error", snap.Listed, snap.PathErr)
	}
}
