package cri

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// gRPC over HTTP/2 without TLS on the runtime's socket, as the gRPC
// protocol (PROTOCOL-HTTP2) describes it: a POST to /service/method with
// content-type application/grpc, each message framed by a flag byte and a
// 4-byte length, the call's status in the grpc-status and grpc-message
// trailers (or headers, when the server answers with trailers only).
// net/http's HTTP/2 client speaks it, so podwatch links no gRPC library.

// service is the CRI's runtime service.
const service = "/runtime.v1.RuntimeService/"

// Status is a call the runtime answered with a gRPC status other than OK.
type Status struct {
	Code    int // gRPC's code, e.g. 5 NotFound, 12 Unimplemented
	Message string
}

func (s *Status) Error() string {
	return fmt.Sprintf("rpc error: code = %s desc = %s", codeName(s.Code), s.Message)
}

// The gRPC status codes podwatch names.
const (
	CodeOK            = 0
	CodeNotFound      = 5
	CodeUnimplemented = 12
)

// codeName is gRPC's name for a status code, as its errors print it.
func codeName(c int) string {
	names := [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
		"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
		"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}
	if c >= 0 && c < len(names) {
		return names[c]
	}
	return "Code(" + strconv.Itoa(c) + ")"
}

// errProtocol: the runtime's answer is not gRPC as podwatch speaks it.
var errProtocol = errors.New("cri: unexpected answer")

// conn calls methods of the runtime service on one socket.
type conn struct {
	tr  *http.Transport
	hc  *http.Client
	url string
}

func newConn(socket string) *conn {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		Protocols: &p,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}
	// The host names nothing (the socket is dialled whatever it is); it is
	// the :authority, which gRPC servers take as given.
	return &conn{tr: tr, hc: &http.Client{Transport: tr}, url: "http://localhost" + service}
}

func (c *conn) close() { c.tr.CloseIdleConnections() }

// frame is msg with gRPC's message header: not compressed, its length.
func frame(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// open starts a call of method with the request message req and returns
// the response, whose body holds the response messages.
func (c *conn) open(ctx context.Context, method string, req []byte) (*http.Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+method, bytes.NewReader(frame(req)))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/grpc")
	r.Header.Set("Te", "trailers")
	r.Header.Set("User-Agent", "podwatch")
	resp, err := c.hc.Do(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: HTTP status %s", errProtocol, resp.Status)
	}
	if err := status(resp.Header); err != nil { // trailers only
		_ = resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// status is the call's error from its grpc-status, nil if OK or absent.
func status(h http.Header) error {
	v := h.Get("Grpc-Status")
	if v == "" || v == "0" {
		return nil
	}
	code, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%w: grpc-status %q", errProtocol, v)
	}
	msg := h.Get("Grpc-Message")
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	return &Status{Code: code, Message: msg}
}

// next reads the next message of a response body; io.EOF after the last.
func next(body io.Reader) ([]byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(body, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: truncated message", errProtocol)
		}
		return nil, err
	}
	if h[0] != 0 {
		return nil, fmt.Errorf("%w: compressed message", errProtocol)
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxMsgSize {
		return nil, fmt.Errorf("%w: message of %d bytes, more than %d", errProtocol, n, maxMsgSize)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(body, msg); err != nil {
		return nil, fmt.Errorf("%w: truncated message: %w", errProtocol, err)
	}
	return msg, nil
}

// end reads what follows the last message and returns the call's status
// from the trailers, which net/http fills once the body is read.
func end(resp *http.Response) error {
	if _, err := next(resp.Body); !errors.Is(err, io.EOF) {
		if err == nil {
			return fmt.Errorf("%w: more than one message", errProtocol)
		}
		return err
	}
	return status(resp.Trailer)
}

// call makes a unary call and returns the response message.
func (c *conn) call(ctx context.Context, method string, req []byte) ([]byte, error) {
	resp, err := c.open(ctx, method, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, err := next(resp.Body)
	if errors.Is(err, io.EOF) {
		if err := status(resp.Trailer); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: no message", errProtocol)
	}
	if err != nil {
		return nil, err
	}
	if err := end(resp); err != nil {
		return nil, err
	}
	return msg, nil
}

// eventStream is an open GetContainerEvents call.
type eventStream struct {
	resp *http.Response
	err  error // once the stream ended
}

func (s *eventStream) Recv() (*ContainerEventResponse, error) {
	if s.err != nil {
		return nil, s.err
	}
	msg, err := next(s.resp.Body)
	if err == nil {
		e := &ContainerEventResponse{}
		if err = decodeContainerEvent(msg, e); err == nil {
			return e, nil
		}
	} else if errors.Is(err, io.EOF) {
		err = io.EOF
		if st := status(s.resp.Trailer); st != nil {
			err = st
		}
	}
	s.err = err
	_ = s.resp.Body.Close()
	return nil, err
}
