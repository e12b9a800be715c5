package agent

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/metrics"
)

const etcdManifest = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.6.16-0
`

// waitFor polls a condition on what the agent wrote; a log or stdout line
// is the only signal the running agent gives.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for time
	}
}

// With a CRI socket the agent follows an ADD to the pod the runtime runs
// and reports StaticPodStarted on stdout, beside StaticPodAdded.
func TestAgentFollowsAnAddToTheRuntime(t *testing.T) {
	f, endpoint := testutil.ServeFakeCRI(t)

	o := etcdOptions(t)
	o.Metrics.BindAddress = "127.0.0.1:0"
	addrs := make(chan net.Addr, 1)
	o.OnMetricsListen = func(a net.Addr) { addrs <- a }
	o.RuntimeEndpoint = endpoint
	o.Follow.PollInterval, o.Follow.IdlePollInterval = 20*time.Millisecond, time.Second
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var stdout, logs testutil.LockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(o, Env{Clock: clock.RealClock{}, Stdout: &stdout, Log: slog.New(slog.NewTextHandler(&logs, nil))}).Run(ctx)
	}()
	waitFor(t, "StaticPodAdded", func() bool { return strings.Contains(stdout.String(), "StaticPodAdded") })

	// What the kubelet would do: a sandbox and a running container with
	// its labels.
	labels := map[string]string{cri.LabelPodName: "etcd-node-1", cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: "uid-1"}
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "etcd-node-1", Namespace: "kube-system", Uid: "uid-1"}, Labels: labels}
	sb, err := f.RuntimeService.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	cl := map[string]string{cri.LabelContainerName: "etcd"}
	for k, v := range labels {
		cl[k] = v
	}
	id, err := f.RuntimeService.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "etcd"}, Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/etcd:3.6.16-0"}, Labels: cl,
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.RuntimeService.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "StaticPodStarted", func() bool { return strings.Contains(stdout.String(), "StaticPodStarted") })
	// The follower's metrics are served, fed by its polls.
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	base := "http://" + (<-addrs).String()
	mfs := testutil.ScrapeMetrics(t, client, base)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"podwatch_follow_outcomes_total", []string{"reason", "StaticPodStarted"}},
		{"podwatch_follow_duration_seconds", []string{"reason", "StaticPodStarted"}},
		{"podwatch_events_recorded_total", []string{"reason", "StaticPodStarted"}},
	} {
		if got := testutil.MetricValue(mfs, c.name, c.labels...); got != 1 {
			t.Errorf("%s%v = %v, want 1", c.name, c.labels, got)
		}
	}
	if got := testutil.MetricValue(mfs, "podwatch_follow_runtime_polls_total"); got < 1 {
		t.Errorf("podwatch_follow_runtime_polls_total = %v, want some", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "Normal  StaticPodStarted") || !strings.Contains(out, "etcd-node-1 runs the change from etcd.yaml") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(logs.String(), "following changes to the running pods through the container runtime") {
		t.Errorf("no start log of the follower:\n%s", logs.String())
	}
}

// Without a socket the agent says once that it does not follow, and runs.
func TestAgentWithoutARuntimeSaysSo(t *testing.T) {
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.Source.Path = t.TempDir()
	o.StateDir = t.TempDir()
	var logs testutil.LockedBuffer
	m := metrics.New("test", nil)
	p, err := New(o, Env{Log: slog.New(slog.NewTextHandler(&logs, nil))}).build(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if p.follower != nil || strings.Count(logs.String(), "changes are not followed to the running pods") != 1 {
		t.Fatalf("follower %v, logs:\n%s", p.follower, logs.String())
	}
	if hasFollowMetrics(t, m) {
		t.Error("podwatch_follow_ metrics served by an agent that does not follow")
	}
}

// hasFollowMetrics says whether m serves any podwatch_follow_ family.
func hasFollowMetrics(t *testing.T, m *metrics.Metrics) bool {
	t.Helper()
	for name := range testutil.GatherMetrics(t, m) {
		if strings.HasPrefix(name, "podwatch_follow_") {
			return true
		}
	}
	return false
}

// The socket is root-equivalent: it is taken from the kubelet config only
// with --follow-pods, and an explicit flag wins.
func TestFollowPodsTakesTheKubeletConfigsEndpoint(t *testing.T) {
	cfg := writeKubeletConfig(t, "staticPodPath: /srv/pods\ncontainerRuntimeEndpoint: unix:///run/crio/crio.sock\n")
	none := func(string) bool { return false }
	for _, tt := range []struct {
		name     string
		follow   bool
		explicit string
		want     string
	}{
		{"not opted in", false, "", ""},
		{"opted in", true, "", "unix:///run/crio/crio.sock"},
		{"explicit wins", true, "/run/other.sock", "/run/other.sock"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.KubeletConfig, o.FollowPods, o.RuntimeEndpoint = cfg, tt.follow, tt.explicit
			changed := none
			if tt.explicit != "" {
				changed = func(f string) bool { return f == FlagRuntimeEndpoint }
			}
			if err := o.ApplyKubeletConfig(changed); err != nil {
				t.Fatal(err)
			}
			if o.RuntimeEndpoint != tt.want {
				t.Fatalf("endpoint %q, want %q", o.RuntimeEndpoint, tt.want)
			}
		})
	}
}

func TestValidateRuntimeEndpoint(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		follow   bool
		want     string
	}{
		{"tcp://10.0.0.1:1234", false, "--container-runtime-endpoint: cri: bad container runtime endpoint"},
		{"", true, "--follow-pods takes the CRI socket from --kubelet-config"},
	} {
		o := DefaultOptions()
		o.NodeName = "node-1"
		o.Source.Path = t.TempDir()
		o.RuntimeEndpoint, o.FollowPods = tt.endpoint, tt.follow
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%q, follow %v) = %v, want %q", tt.endpoint, tt.follow, err, tt.want)
		}
	}
}

// The follower reads what it has: the runtime alone, the runtime and the
// mirror pods through the API client the Events go through, or the mirror
// pods alone; the start log says which.
func TestFollowerSourcesSaidAtStart(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, endpoint := testutil.ServeFakeCRI(t)
	// Unreachable: the warm start fails fast and the agent is built.
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	for _, tt := range []struct {
		endpoint, cluster, want string
	}{
		{endpoint, "", "following changes to the running pods through the container runtime\""},
		{endpoint, kubeconfig, "following changes to the running pods through the container runtime and the mirror pods\""},
		{"", kubeconfig, "following changes to the running pods through the mirror pods alone"},
	} {
		o := DefaultOptions()
		o.NodeName = "node-1"
		o.Source.Path = t.TempDir()
		o.StateDir = t.TempDir()
		o.RuntimeEndpoint = tt.endpoint
		o.Kube.Kubeconfig = tt.cluster
		var logs testutil.LockedBuffer
		m := metrics.New("test", nil)
		p, err := New(o, Env{Log: slog.New(slog.NewTextHandler(&logs, nil))}).build(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		p.close()
		// The README: the follow_ metrics exist whenever the agent
		// follows, through the runtime or the mirror pods alone.
		if !hasFollowMetrics(t, m) {
			t.Errorf("endpoint %q, kubeconfig %q: no podwatch_follow_ metrics", tt.endpoint, tt.cluster)
		}
		if p.follower == nil || strings.Count(logs.String(), "following changes") != 1 || !strings.Contains(logs.String(), tt.want) {
			t.Errorf("endpoint %q, kubeconfig %q: follower %v, want one start log %s:\n%s", tt.endpoint, tt.cluster, p.follower, tt.want, logs.String())
		}
		if (p.runtime != nil) != (tt.endpoint != "") {
			t.Errorf("endpoint %q: runtime client %v", tt.endpoint, p.runtime)
		}
	}
}

// etcdOptions are agent options for node-1 on a fresh folder holding
// etcd.yaml and a fresh state dir.
func etcdOptions(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "etcd.yaml"), []byte(etcdManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.Source.Path = dir
	o.StateDir = t.TempDir()
	// Tests of packages run at once: a fixed port would collide.
	o.Metrics.BindAddress = "127.0.0.1:0"
	return o
}
