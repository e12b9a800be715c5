package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/kube"
)

func TestSetupKubeWithoutClusterIsNoSink(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	local := []v1.Event{{}}
	regs, restore, api, err := setupKube(context.Background(), kube.Options{}, "n", clock.RealClock{}, slog.New(slog.DiscardHandler), local)
	if err != nil || regs != nil || len(restore) != 1 || api != nil {
		t.Errorf("setupKube = %v, %d restored, %v, %v; want no sink, local kept, no client, no error", regs, len(restore), api, err)
	}
}

func TestSetupKubeWithKubeconfig(t *testing.T) {
	// An unreachable server: setup must not block on it (Restore fails fast
	// with a refused connection and keeps the local Events).
	path := writeKubeconfig(t, "https://127.0.0.1:1")
	var opts kube.Options
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{"--kubeconfig", path, "--kube-api-qps", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	regs, _, api, err := setupKube(context.Background(), opts, "n", clock.RealClock{}, slog.New(slog.DiscardHandler), nil)
	if err != nil || len(regs) != 1 || regs[0].Name != kubeSinkName || api == nil {
		t.Fatalf("setupKube = %v, %v, %v; want the api sink and its client, for the follower's mirror pods", regs, api, err)
	}
	if kubeSinkOf(regs) == nil {
		t.Errorf("no *kube.Sink among %v: the agent would not run its moves", regs)
	}
}

func TestKubeOptionsValidate(t *testing.T) {
	err := kube.Options{QPS: -1, Burst: -1, Kubeconfig: "/does/not/exist"}.Validate()
	for _, want := range []string{"--kube-api-qps", "--kube-api-burst", "--kubeconfig"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v; want it to mention %s", err, want)
		}
	}
}

// writeKubeconfig writes a kubeconfig for server with a token user and
// returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
