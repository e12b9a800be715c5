package kubelet

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// fakeImageSize is what every image weighs. The kubelet treats a zero size
// as an image that is not there and fails the container with
// CreateContainerConfigError.
const fakeImageSize = 1 << 20

// cri is cri-client's fake runtime and image services on a unix socket,
// with every call logged and the sandbox calls recorded in a History.
type cri struct {
	srv  *grpc.Server
	lis  net.Listener
	hist *History
	fake *fake.RemoteRuntime

	mu   sync.Mutex
	icpt Interceptor // nil: every call goes straight to the fake
}

// Interceptor wraps each call to the fake CRI, the kubelet's and a
// follower's alike: method is the gRPC full method name, call hands req to
// the fake. It may delay a call, fail it without calling call, or change
// the fake's state once call returns.
type Interceptor func(ctx context.Context, method string, req any, call func() (any, error)) (any, error)

func (c *cri) intercept(ctx context.Context, method string, req any, call func() (any, error)) (any, error) {
	c.mu.Lock()
	i := c.icpt
	c.mu.Unlock()
	if i == nil {
		return call()
	}
	return i(ctx, method, req, call)
}

// runtime adds to the fake what the kubelet needs of a container's status.
type runtime struct {
	*fake.RemoteRuntime
}

// CreateContainer records the log path the kubelet asked for: the fake
// keeps none, and with an empty one the kubelet's container log manager
// globs "*" in its working directory and deletes what matches. The path is
// the kubelet's, inside its mount namespace; nothing here creates it, since
// this process sees the host's /var/log. It records the mounts too, which
// a real runtime reports in the container's status: the kubelet finds the
// host file of the termination message among them.
func (r runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	resp, err := r.RemoteRuntime.CreateContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	rs := r.RuntimeService
	rs.Lock()
	defer rs.Unlock()
	if c, ok := rs.Containers[resp.ContainerId]; ok {
		c.LogPath = filepath.Join(req.GetSandboxConfig().GetLogDirectory(), req.GetConfig().GetLogPath())
		c.Mounts = req.GetConfig().GetMounts()
	}
	return resp, nil
}

// startCRI serves the fake on a unix socket at sock, logging every call to
// log (which must be safe for concurrent use).
func startCRI(sock string, log io.Writer, hist *History) (*cri, error) {
	f := fake.NewFakeRemoteRuntime()
	// What the fake's own Start would set, plus the cgroup driver, which
	// the kubelet asks the runtime for and fails without.
	f.RuntimeService.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}
	f.RuntimeService.FakeLinuxConfiguration = &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}
	f.ImageService.SetFakeImageSize(fakeImageSize)

	c := &cri{hist: hist, fake: f}
	var logMu sync.Mutex
	c.srv = grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := c.intercept(ctx, info.FullMethod, req, func() (any, error) { return h(ctx, req) })
		logMu.Lock()
		fmt.Fprintf(log, "%s %s err=%v\n", time.Now().Format("15:04:05.000000"), info.FullMethod, err)
		logMu.Unlock()
		if err == nil {
			c.record(req, resp)
		}
		return resp, err
	}))
	r := runtime{f}
	runtimeapi.RegisterRuntimeServiceServer(c.srv, r)
	runtimeapi.RegisterImageServiceServer(c.srv, r)
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("fake CRI: %w", err)
	}
	c.lis = lis
	go func() { _ = c.srv.Serve(lis) }()
	return c, nil
}

// record turns the sandbox calls into Actions. Stop and Remove name only
// the sandbox; the History maps it back to the pod RunPodSandbox named.
func (c *cri) record(req, resp any) {
	now := time.Now()
	switch r := req.(type) {
	case *runtimeapi.RunPodSandboxRequest:
		m := r.GetConfig().GetMetadata()
		c.hist.addSandbox(now, resp.(*runtimeapi.RunPodSandboxResponse).GetPodSandboxId(),
			Pod{Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUid()})
	case *runtimeapi.StopPodSandboxRequest:
		c.hist.sandboxAction(now, ActionStop, r.GetPodSandboxId())
	case *runtimeapi.RemovePodSandboxRequest:
		c.hist.sandboxAction(now, ActionRemove, r.GetPodSandboxId())
	}
}

func (c *cri) stop() {
	c.srv.Stop()
}
