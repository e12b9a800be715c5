package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fake "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/cri"
)

// runEtcd makes the fake runtime run etcd-node-1 as the kubelet would: a
// sandbox and a running container with its labels, created at created
// (zero: now).
func runEtcd(t *testing.T, rs *fake.FakeRuntimeService, created time.Time) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{cri.LabelPodName: "etcd-node-1", cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: "uid-1"}
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "etcd-node-1", Namespace: "kube-system", Uid: "uid-1"}, Labels: labels}
	sb, err := rs.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	cl := map[string]string{cri.LabelContainerName: "etcd"}
	for k, v := range labels {
		cl[k] = v
	}
	id, err := rs.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "etcd"}, Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/etcd:3.6.16-0"}, Labels: cl,
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if !created.IsZero() {
		rs.Lock()
		rs.Sandboxes[sb].CreatedAt = created.UnixNano()
		rs.Containers[id].CreatedAt = created.UnixNano()
		rs.Unlock()
	}
}

// startOnFolder runs the agent on a folder holding etcd.yaml, written
// long before (a running control plane's), with a fresh state dir and
// the fake runtime at endpoint; it returns stdout and a stop.
func startOnFolder(t *testing.T, endpoint string) (*testutil.LockedBuffer, func()) {
	t.Helper()
	o := etcdOptions(t)
	p := filepath.Join(o.Source.Path, "etcd.yaml")
	old := time.Now().Add(-90 * 24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	o.Metrics.BindAddress = "127.0.0.1:0"
	o.RuntimeEndpoint = endpoint
	o.Follow.PollInterval, o.Follow.IdlePollInterval = 20*time.Millisecond, time.Second
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var stdout testutil.LockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(o, Env{Clock: clock.RealClock{}, Stdout: &stdout, Log: slog.New(slog.DiscardHandler)}).Run(ctx)
	}()
	return &stdout, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// A first start on a folder whose pod the runtime has run for months says
// it is found running, once, and never that the kubelet starts it.
func TestFirstStartFindsRunningPod(t *testing.T) {
	f, endpoint := testutil.ServeFakeCRI(t)
	runEtcd(t, f.RuntimeService, time.Now().Add(-90*24*time.Hour))
	stdout, stop := startOnFolder(t, endpoint)
	waitFor(t, "StaticPodFound", func() bool { return strings.Contains(stdout.String(), "StaticPodFound") })
	stop()
	out := stdout.String()
	if !strings.Contains(out, "etcd.yaml (") || !strings.Contains(out, "): found running for 90d when podwatch started; ") || strings.Count(out, "StaticPodFound") != 1 {
		t.Errorf("want one StaticPodFound of a pod found running; stdout:\n%s", out)
	}
	if strings.Contains(out, "StaticPodAdded") || strings.Contains(out, "starts the pod") {
		t.Errorf("a pod running for months is said to be started; stdout:\n%s", out)
	}
}

// A first start before the kubelet started the pod (a boot) says the
// kubelet starts it, and follows it to StaticPodStarted.
func TestFirstStartAtBootStartsPod(t *testing.T) {
	f, endpoint := testutil.ServeFakeCRI(t)
	stdout, stop := startOnFolder(t, endpoint)
	defer stop()
	waitFor(t, "StaticPodFound", func() bool { return strings.Contains(stdout.String(), "StaticPodFound") })
	if out := stdout.String(); !strings.Contains(out, "the kubelet starts the pod") || strings.Contains(out, "found running") {
		t.Fatalf("want the kubelet starting it; stdout:\n%s", out)
	}
	runEtcd(t, f.RuntimeService, time.Time{})
	waitFor(t, "StaticPodStarted", func() bool { return strings.Contains(stdout.String(), "after podwatch found it") })
	if out := stdout.String(); strings.Contains(out, "StaticPodAdded") || strings.Count(out, "StaticPodFound") != 1 {
		t.Errorf("want one StaticPodFound and no ADD; stdout:\n%s", out)
	}
}
