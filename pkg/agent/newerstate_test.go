package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/published"
)

// A published state a newer podwatch wrote and this one cannot read stops
// the agent with an error naming the file, before it announces anything:
// starting from nothing would call every pod of the folder added.
func TestUnreadableNewerStateStopsBeforeAnnouncing(t *testing.T) {
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.Source.Path = t.TempDir()
	o.StateDir = t.TempDir()
	o.Metrics.BindAddress = "0"
	manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: kube-system\nspec:\n  containers:\n  - name: web\n    image: nginx:1.28\n"
	if err := os.WriteFile(filepath.Join(o.Source.Path, "web.yaml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(o.StateDir, published.StateFile)
	if err := os.WriteFile(state, []byte(`{"version":1000,"pods":"a shape this release does not know"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// Bounded: an agent that starts from nothing instead runs on.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := New(o, Env{Clock: clock.RealClock{}, Stdout: &out}).Run(ctx)
	if !errors.Is(err, published.ErrNewer) || !strings.Contains(err.Error(), state) {
		t.Fatalf("Run = %v, want an error naming %s", err, state)
	}
	if out.Len() > 0 {
		t.Fatalf("announced before stopping:\n%s", out.String())
	}
}
