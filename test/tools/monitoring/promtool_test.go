package monitoring

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// promtoolVersion is the github.com/prometheus/prometheus module promtool
// is built from; keep it in step with go.mod and ../build-binaries.sh.
const promtoolVersion = "v0.316.0"

// promtoolTags leave out every service discovery but Kubernetes' (static
// and file discovery are always in): the other clouds' SDKs would double
// the cold build, and no config checked here uses them.
const promtoolTags = "remove_all_sd,enable_kubernetes_sd"

// cacheDir is the binary cache test/tools/apiserver uses, so one warm
// cache serves both: $PODWATCH_BIN_CACHE, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/podwatch/bin. test/tools' module cannot
// be imported here (it would pull k8s.io/kubernetes in), hence the copy of
// its few lines.
func cacheDir() (string, error) {
	if d := os.Getenv("PODWATCH_BIN_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	return filepath.Join(d, "podwatch", "bin"), nil
}

// promtool returns the cached promtool, building it from this module's
// tool directive when it is missing; a failure fails the test.
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := buildPromtool()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildPromtool returns the cached promtool, building it from this
// module's tool directive when it is missing. It holds the cache's lock
// while it builds, as test/tools does, so parallel test binaries build
// once.
func buildPromtool() (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("cache lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("cache lock: %w", err)
	}
	out := filepath.Join(dir, "promtool-"+promtoolVersion)
	if fi, err := os.Stat(out); err == nil && fi.Mode()&0o111 != 0 {
		return out, nil
	}
	tmp := fmt.Sprintf("%s.tmp.%d", out, os.Getpid())
	cmd := exec.Command("go", "build", "-trimpath", "-tags", promtoolTags, "-ldflags=-s -w", "-o", tmp,
		"github.com/prometheus/prometheus/cmd/promtool")
	if o, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build promtool: %w\n%s", err, o)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("install %s: %w", out, err)
	}
	return out, nil
}

// runPromtool runs promtool with args in dir and returns its combined
// output; a non-zero exit fails the test with that output.
func runPromtool(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	out, err := promtoolOutput(bin, dir, args...)
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	return out
}

func promtoolOutput(bin, dir string, args ...string) (string, error) {
	var buf bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}
