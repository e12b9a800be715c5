package cri

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// serveFake serves cri-client's fake runtime for one test.
func serveFake(t *testing.T) (*fake.RemoteRuntime, string) {
	t.Helper()
	return testutil.ServeFakeCRI(t)
}

func newClient(t *testing.T, endpoint string) *Client {
	t.Helper()
	c, err := New(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// runPod creates a sandbox and its containers as the kubelet does, with
// its labels, and starts the containers.
func runPod(t *testing.T, f *fake.RemoteRuntime, ns, name, uid string, containers ...string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	podLabels := map[string]string{LabelPodName: name, LabelPodNamespace: ns, LabelPodUID: uid}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:    &runtimeapi.PodSandboxMetadata{Name: name, Namespace: ns, Uid: uid},
		Labels:      podLabels,
		Annotations: map[string]string{AnnotationConfigSource: ConfigSourceFile},
	}
	sb, err := f.RuntimeService.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range containers {
		labels := map[string]string{LabelContainerName: c}
		for k, v := range podLabels {
			labels[k] = v
		}
		id, err := f.RuntimeService.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
			Metadata:    &runtimeapi.ContainerMetadata{Name: c},
			Image:       &runtimeapi.ImageSpec{Image: "registry.k8s.io/" + c + ":v1"},
			Labels:      labels,
			Annotations: map[string]string{AnnotationContainerHash: "abc"},
		}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.RuntimeService.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return sb, ids
}

// The client reads through a real socket what the kubelet's labels say,
// and a container's exit code and reason, which only ContainerStatus has.
func TestClientReadsTheFakeRuntime(t *testing.T) {
	f, endpoint := serveFake(t)
	apiSB, apiIDs := runPod(t, f, "kube-system", "kube-apiserver-node-1", "uid-api", "kube-apiserver")
	runPod(t, f, "kube-system", "etcd-node-1", "uid-etcd", "etcd")
	// The container exits, as one in a crash loop does.
	f.RuntimeService.Lock()
	c := f.RuntimeService.Containers[apiIDs[0]]
	c.State, c.ExitCode, c.Reason, c.FinishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, 137, "OOMKilled", time.Now().UnixNano()
	f.RuntimeService.Unlock()

	cl := newClient(t, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	all, err := cl.ListPodSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("%d sandboxes, want 2", len(all))
	}
	sbs, err := cl.ListPodSandbox(ctx, &PodSandboxFilter{LabelSelector: map[string]string{LabelPodUID: "uid-api"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sbs) != 1 || sbs[0].GetId() != apiSB || sbs[0].GetState() != PodSandboxState_SANDBOX_READY ||
		sbs[0].GetLabels()[LabelPodName] != "kube-apiserver-node-1" || sbs[0].GetAnnotations()[AnnotationConfigSource] != ConfigSourceFile {
		t.Fatalf("sandboxes of uid-api: %v", sbs)
	}
	cs, err := cl.ListContainers(ctx, &ContainerFilter{PodSandboxId: apiSB})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].GetId() != apiIDs[0] || cs[0].GetState() != ContainerState_CONTAINER_EXITED ||
		cs[0].GetLabels()[LabelContainerName] != "kube-apiserver" {
		t.Fatalf("containers of %s: %v", apiSB, cs)
	}
	st, err := cl.ContainerStatus(ctx, apiIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.GetExitCode() != 137 || st.GetReason() != "OOMKilled" || st.GetAnnotations()[AnnotationContainerHash] != "abc" {
		t.Fatalf("status of %s: exit %d reason %q annotations %v", apiIDs[0], st.GetExitCode(), st.GetReason(), st.GetAnnotations())
	}

	if err := f.RuntimeService.StopPodSandbox(ctx, apiSB); err != nil {
		t.Fatal(err)
	}
	sst, err := cl.PodSandboxStatus(ctx, apiSB)
	if err != nil {
		t.Fatal(err)
	}
	if sst.GetState() != PodSandboxState_SANDBOX_NOTREADY || sst.GetMetadata().GetUid() != "uid-api" {
		t.Fatalf("sandbox status after stop: %v", sst)
	}

	// What is gone is an error that names it and the runtime.
	if _, err := cl.ContainerStatus(ctx, "no-such-container"); err == nil ||
		!strings.Contains(err.Error(), "no-such-container") || !strings.Contains(err.Error(), endpoint) {
		t.Fatalf("status of a missing container: %v", err)
	}
	if _, err := cl.PodSandboxStatus(ctx, "no-such-sandbox"); err == nil || !strings.Contains(err.Error(), "no-such-sandbox") {
		t.Fatalf("status of a missing sandbox: %v", err)
	}
}

// A runtime that is not there fails the call at once, naming the socket;
// it does not hang until the context ends.
func TestClientWithoutARuntimeFailsFast(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "absent.sock")
	cl := newClient(t, sock)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := cl.ListPodSandbox(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), sock) {
		t.Fatalf("ListPodSandbox without a runtime = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the call waited for the context (%v)", time.Since(start))
	}
}

func TestEndpoints(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"unix:///run/containerd/containerd.sock", "/run/containerd/containerd.sock"},
		{"/run/crio/crio.sock", "/run/crio/crio.sock"},
		{"unix:///run//x/../crio.sock", "/run/crio.sock"},
	} {
		got, err := SocketPath(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("SocketPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"tcp://10.0.0.1:1234", "npipe:////./pipe/x", "run/containerd.sock", "unix://relative.sock", ""} {
		if _, err := New(bad); !errors.Is(err, ErrEndpoint) || !strings.Contains(err.Error(), "endpoint") {
			t.Errorf("New(%q) = %v, want ErrEndpoint", bad, err)
		}
	}
}
