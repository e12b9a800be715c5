//go:build linux

package kubelet

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/test/tools/apiserver"
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

// A kubelet whose server port is taken before it binds it exits at start;
// one whose healthz port is taken runs on without healthz. Start says
// either as errPortTaken, which it answers with other ports.
func TestStartSaysAPortWasTaken(t *testing.T) {
	if testing.Short() {
		Skip(t, "runs the real kubelet")
	}
	if err := Isolation(filepath.Join(t.TempDir(), "probe")); err != nil {
		Skip(t, err)
	}
	bin, err := apiserver.BuildKubelet()
	if err != nil {
		t.Fatal(err)
	}
	for i, port := range []string{"server", "healthz"} {
		t.Run(port, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			ports, err := freePorts(2)
			if err != nil {
				t.Fatal(err)
			}
			ports[i] = taken.Addr().(*net.TCPAddr).Port
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := Config{Binary: bin, Dir: filepath.Join(t.TempDir(), "k"), NodeName: "n", ports: ports}
			k, err := Start(ctx, cfg)
			if err == nil {
				_ = k.Stop()
				t.Fatalf("Start of a kubelet whose %s port is taken returned no error", port)
			}
			if !errors.Is(err, errPortTaken) || !strings.Contains(err.Error(), "address already in use") {
				t.Fatalf("Start: %v, want errPortTaken with the log's line", err)
			}
		})
	}
}

// The harness's ports lie below the ephemeral range, where no connection
// made meanwhile takes its local port, and are distinct.
func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	lo, err := ephemeralLow()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := freePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p >= lo || p < 1024 || seen[p] {
			t.Errorf("port %d: want distinct ports in [1024, %d)", p, lo)
		}
		seen[p] = true
	}
}
