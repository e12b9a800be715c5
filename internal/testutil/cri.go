package testutil

import (
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// ServeFakeCRI serves cri-client's fake runtime on a unix socket with a
// real gRPC server until the test ends, and returns it and its endpoint.
func ServeFakeCRI(tb testing.TB) (*fake.RemoteRuntime, string) {
	tb.Helper()
	f := fake.NewFakeRemoteRuntime()
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	sock := filepath.Join(tb.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	tb.Cleanup(func() {
		srv.Stop()
		<-served
	})
	return f, "unix://" + sock
}
