package cri

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxMsgSize is the largest response accepted, as the kubelet's own CRI
// client allows: a node with many containers lists more than gRPC's 4 MiB
// default.
const maxMsgSize = 16 << 20

// ErrEndpoint: the endpoint is not a unix socket podwatch can dial.
var ErrEndpoint = errors.New("cri: bad container runtime endpoint")

// Client holds the read calls of the runtime service, and nothing else.
type Client struct {
	endpoint string
	conn     *grpc.ClientConn
	rt       runtimeapi.RuntimeServiceClient
}

// SocketPath turns an endpoint as the kubelet takes it
// (unix:///run/containerd/containerd.sock) or a plain absolute path into
// the socket's path. Other schemes (tcp, npipe) are refused: a node agent
// reads its own node's runtime.
func SocketPath(endpoint string) (string, error) {
	p := endpoint
	if rest, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		p = rest
	} else if strings.Contains(endpoint, "://") {
		return "", fmt.Errorf("%w %q: only unix:// sockets are supported", ErrEndpoint, endpoint)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w %q: want unix:///absolute/path or /absolute/path", ErrEndpoint, endpoint)
	}
	return filepath.Clean(p), nil
}

// New makes a client for the runtime at endpoint. It does not connect:
// the first call does, and each call fails with the runtime's error until
// the socket answers, so a runtime that starts after podwatch is found
// without a restart.
func New(endpoint string) (*Client, error) {
	path, err := SocketPath(endpoint)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize)))
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrEndpoint, endpoint, err)
	}
	return &Client{endpoint: "unix://" + path, conn: conn, rt: runtimeapi.NewRuntimeServiceClient(conn)}, nil
}

// Endpoint is the endpoint the client dials, as unix:///path.
func (c *Client) Endpoint() string { return c.endpoint }

// Close releases the connection.
func (c *Client) Close() error { return c.conn.Close() }

// ListPodSandbox lists the sandboxes that match filter (nil: all).
func (c *Client) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	resp, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	if err != nil {
		return nil, fmt.Errorf("ListPodSandbox at %s: %w", c.endpoint, err)
	}
	return resp.GetItems(), nil
}

// ListContainers lists the containers that match filter (nil: all).
func (c *Client) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	resp, err := c.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return nil, fmt.Errorf("ListContainers at %s: %w", c.endpoint, err)
	}
	return resp.GetContainers(), nil
}

// ContainerStatus is one container's status: its exit code and reason,
// which ListContainers does not give.
func (c *Client) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	resp, err := c.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return nil, fmt.Errorf("ContainerStatus %s at %s: %w", id, c.endpoint, err)
	}
	if resp.GetStatus() == nil {
		return nil, fmt.Errorf("ContainerStatus %s at %s: the runtime returned no status", id, c.endpoint)
	}
	return resp.GetStatus(), nil
}

// PodSandboxStatus is one sandbox's status.
func (c *Client) PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error) {
	resp, err := c.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		return nil, fmt.Errorf("PodSandboxStatus %s at %s: %w", id, c.endpoint, err)
	}
	if resp.GetStatus() == nil {
		return nil, fmt.Errorf("PodSandboxStatus %s at %s: the runtime returned no status", id, c.endpoint)
	}
	return resp.GetStatus(), nil
}

// GetContainerEvents opens the runtime's stream of container events
// (created, started, stopped, deleted), which reads and changes nothing.
// The stream lasts until ctx ends, which the caller must see to; a runtime
// that does not stream fails the first Recv (Unimplemented) or ends it at
// once (io.EOF), as cri-client's fake does.
func (c *Client) GetContainerEvents(ctx context.Context) (runtimeapi.RuntimeService_GetContainerEventsClient, error) {
	s, err := c.rt.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		return nil, fmt.Errorf("GetContainerEvents at %s: %w", c.endpoint, err)
	}
	return s, nil
}
