//go:build linux

package kubelet

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A kubelet that exits before it is healthy fails Start, with the reason;
// it must not come back as a running kubelet.
func TestStartFailsWhenTheKubeletExits(t *testing.T) {
	dir := t.TempDir()
	if err := Isolation(filepath.Join(dir, "probe")); err != nil {
		Skip(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k, err := Start(ctx, Config{Binary: "/bin/false", Dir: filepath.Join(dir, "k"), NodeName: "n"})
	if err == nil {
		_ = k.Stop()
		t.Fatal("Start of a kubelet that exits at once returned no error")
	}
	if !strings.Contains(err.Error(), "exited before it was healthy") {
		t.Fatalf("Start: %v, want the kubelet's exit", err)
	}
}
