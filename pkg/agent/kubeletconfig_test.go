package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	"k8s.io/utils/clock"
)

func writeKubeletConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKubeletConfigSetsPathUnlessFlagGiven(t *testing.T) {
	cfg := writeKubeletConfig(t, "staticPodPath: manifests\nfileCheckFrequency: 7s\n")
	o := DefaultOptions()
	o.KubeletConfig = cfg
	if err := o.ApplyKubeletConfig(func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(cfg), "manifests"); o.Source.Path != want || o.Source.FileCheckFrequency != 7*time.Second {
		t.Fatalf("path %q freq %v, want %q 7s", o.Source.Path, o.Source.FileCheckFrequency, want)
	}
	o = DefaultOptions()
	o.KubeletConfig = cfg
	o.Source.Path = "/explicit"
	if err := o.ApplyKubeletConfig(func(f string) bool { return f == "path" }); err != nil {
		t.Fatal(err)
	}
	if o.Source.Path != "/explicit" || o.Source.FileCheckFrequency != 7*time.Second {
		t.Fatalf("explicit --path lost: %q %v", o.Source.Path, o.Source.FileCheckFrequency)
	}
	o.KubeletConfig = filepath.Join(t.TempDir(), "missing.yaml")
	if err := o.ApplyKubeletConfig(func(string) bool { return false }); err == nil {
		t.Fatal("a missing kubelet config was accepted")
	}
}

func TestStaticPodsDisabledIdles(t *testing.T) {
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.KubeletConfig = writeKubeletConfig(t, "staticPodPath: \"\"\n")
	o.Metrics.BindAddress = "0"
	if err := o.ApplyKubeletConfig(func(string) bool { return false }); err != nil || !o.StaticPodsDisabled {
		t.Fatalf("err %v disabled %v", err, o.StaticPodsDisabled)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	out := &testutil.LockedBuffer{}
	go func() {
		done <- New(o, Env{Clock: clock.RealClock{}, Stdout: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).Run(ctx)
	}()
	select {
	case err := <-done:
		t.Fatalf("run exited while static pods are off: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Fatalf("events printed with static pods off:\n%s", out.String())
	}
}
