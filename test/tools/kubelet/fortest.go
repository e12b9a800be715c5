//go:build linux

package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// RequireEnv names the environment variable that, set to 1, fails a test
// that would skip the real kubelet (under -short, or where it cannot be
// isolated) instead of skipping it: CI sets it, so that it never passes
// with the real-kubelet suites left out.
const RequireEnv = "PODWATCH_REQUIRE_KUBELET"

// Skip skips t for why, or fails it when RequireEnv is set to 1.
func Skip(t testing.TB, why any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%v; %s=1 requires the real kubelet to run", why, RequireEnv)
	}
	t.Skip(why)
}

// ForTest starts a kubelet for t as Start does, with what every test of it
// needs around it: t is skipped (see Skip) under -short or where the
// kubelet cannot be isolated, cfg.Binary is built when empty, and cfg.Dir is a new folder in
// t's temporary one when empty. When t ends the kubelet is stopped, the end
// of its log is logged if t failed, and t fails if the host's sysctls or
// folders are not as they were before it started, or if a hostPath of a
// manifest it read, or an ancestor of one, was created since.
func ForTest(ctx context.Context, t testing.TB, cfg Config) *Kubelet {
	t.Helper()
	if testing.Short() {
		Skip(t, "runs the real kubelet")
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "k")
	}
	if err := Isolation(filepath.Join(filepath.Dir(cfg.Dir), "probe-"+filepath.Base(cfg.Dir))); err != nil {
		Skip(t, err)
	}
	if cfg.Binary == "" {
		bin, err := apiserver.BuildKubelet()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Binary = bin
	}
	before, err := ReadHost()
	if err != nil {
		t.Fatal(err)
	}
	k, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubelet in %s, the end of its log:\n%s", cfg.Dir, k.LogTail(60))
		}
		if err := k.Stop(); err != nil {
			t.Errorf("kubelet stop: %v", err)
		}
		after, err := ReadHost()
		if err != nil {
			t.Error(err)
		} else if d := before.Diff(after); d != "" {
			t.Errorf("the kubelet changed the host:\n%s", d)
		}
		if created, err := k.CreatedOnHost(); err != nil {
			t.Error(err)
		} else if len(created) > 0 {
			t.Errorf("the kubelet created %s on the host (hostPath volumes of the manifests it read)", strings.Join(created, ", "))
		}
	})
	return k
}

// LogTail is the last n lines of the kubelet's log.
func (k *Kubelet) LogTail(n int) string {
	b, err := os.ReadFile(k.Log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
