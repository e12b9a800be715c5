package cri

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
	conn     *conn
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
	return &Client{endpoint: "unix://" + path, conn: newConn(path)}, nil
}

// Endpoint is the endpoint the client dials, as unix:///path.
func (c *Client) Endpoint() string { return c.endpoint }

// Close releases the connection.
func (c *Client) Close() error {
	c.conn.close()
	return nil
}

// ListPodSandbox lists the sandboxes that match filter (nil: all).
func (c *Client) ListPodSandbox(ctx context.Context, filter *PodSandboxFilter) ([]*PodSandbox, error) {
	msg, err := c.conn.call(ctx, "ListPodSandbox", listPodSandboxRequest(filter))
	var out []*PodSandbox
	if err == nil {
		out, err = decodeList(msg, 1, decodePodSandbox)
	}
	if err != nil {
		return nil, fmt.Errorf("ListPodSandbox at %s: %w", c.endpoint, err)
	}
	return out, nil
}

// ListContainers lists the containers that match filter (nil: all).
func (c *Client) ListContainers(ctx context.Context, filter *ContainerFilter) ([]*Container, error) {
	msg, err := c.conn.call(ctx, "ListContainers", listContainersRequest(filter))
	var out []*Container
	if err == nil {
		out, err = decodeList(msg, 1, decodeContainer)
	}
	if err != nil {
		return nil, fmt.Errorf("ListContainers at %s: %w", c.endpoint, err)
	}
	return out, nil
}

// ContainerStatus is one container's status: its exit code and reason,
// which ListContainers does not give.
func (c *Client) ContainerStatus(ctx context.Context, id string) (*ContainerStatus, error) {
	msg, err := c.conn.call(ctx, "ContainerStatus", idRequest(id))
	var out *ContainerStatus
	if err == nil {
		out, err = decodeOne(msg, 1, decodeContainerStatus)
	}
	if err != nil {
		return nil, fmt.Errorf("ContainerStatus %s at %s: %w", id, c.endpoint, err)
	}
	if out == nil {
		return nil, fmt.Errorf("ContainerStatus %s at %s: the runtime returned no status", id, c.endpoint)
	}
	return out, nil
}

// PodSandboxStatus is one sandbox's status.
func (c *Client) PodSandboxStatus(ctx context.Context, id string) (*PodSandboxStatus, error) {
	msg, err := c.conn.call(ctx, "PodSandboxStatus", idRequest(id))
	var out *PodSandboxStatus
	if err == nil {
		out, err = decodeOne(msg, 1, decodePodSandboxStatus)
	}
	if err != nil {
		return nil, fmt.Errorf("PodSandboxStatus %s at %s: %w", id, c.endpoint, err)
	}
	if out == nil {
		return nil, fmt.Errorf("PodSandboxStatus %s at %s: the runtime returned no status", id, c.endpoint)
	}
	return out, nil
}

// GetContainerEvents opens the runtime's stream of container events
// (created, started, stopped, deleted), which reads and changes nothing.
// The stream lasts until ctx ends, which the caller must see to; a runtime
// that does not stream fails the first Recv (Unimplemented) or ends it at
// once (io.EOF), as cri-client's fake does.
func (c *Client) GetContainerEvents(ctx context.Context) (ContainerEventStream, error) {
	resp, err := c.conn.open(ctx, "GetContainerEvents", nil)
	if err != nil {
		var st *Status
		if errors.As(err, &st) { // answered at once: the stream's end
			return &eventStream{err: fmt.Errorf("GetContainerEvents at %s: %w", c.endpoint, err)}, nil
		}
		return nil, fmt.Errorf("GetContainerEvents at %s: %w", c.endpoint, err)
	}
	return &eventStream{resp: resp}, nil
}
