package cri

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The hand-written decoding reads what the generated code writes, field
// by field, and skips the fields it does not hold (mounts, resources,
// network), however they are typed.
func TestDecodeReadsTheGeneratedEncoding(t *testing.T) {
	meta := &runtimeapi.ContainerMetadata{Name: "etcd", Attempt: 3}
	img := &runtimeapi.ImageSpec{Image: "sha256:1", UserSpecifiedImage: "registry.k8s.io/etcd:3.6", Annotations: map[string]string{"a": "b"}}
	st := &runtimeapi.ContainerStatus{
		Id: "c1", Metadata: meta, State: runtimeapi.ContainerState_CONTAINER_EXITED, CreatedAt: 1, StartedAt: 2, FinishedAt: 3,
		ExitCode: -1, Image: img, ImageRef: "ref", Reason: "OOMKilled", Message: "m",
		Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"x": "y", "": ""},
		Mounts:    []*runtimeapi.Mount{{ContainerPath: "/a", HostPath: "/b"}},
		Resources: &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 2}},
		LogPath:   "/log", ImageId: "id",
	}
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId: "c1", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, CreatedAt: 9,
		PodSandboxStatus: &runtimeapi.PodSandboxStatus{
			Id: "s1", Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "u", Namespace: "n", Attempt: 1},
			State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 7,
			Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.1"},
			Labels:  map[string]string{"k": "v"}, Annotations: map[string]string{"kubernetes.io/config.source": "file"},
			RuntimeHandler: "runc",
		},
		ContainersStatuses: []*runtimeapi.ContainerStatus{st, {Id: "c2"}},
	}
	b, err := proto.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var got ContainerEventResponse
	if err := decodeContainerEvent(b, &got); err != nil {
		t.Fatal(err)
	}
	wantStatus := &ContainerStatus{
		Id: "c1", Metadata: &ContainerMetadata{Name: "etcd", Attempt: 3}, State: ContainerState_CONTAINER_EXITED,
		CreatedAt: 1, StartedAt: 2, FinishedAt: 3, ExitCode: -1,
		Image:    &ImageSpec{Image: "sha256:1", UserSpecifiedImage: "registry.k8s.io/etcd:3.6"},
		ImageRef: "ref", Reason: "OOMKilled", Message: "m",
		Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"x": "y", "": ""},
	}
	want := ContainerEventResponse{
		ContainerId: "c1", ContainerEventType: ContainerEventType_CONTAINER_STOPPED_EVENT, CreatedAt: 9,
		PodSandboxStatus: &PodSandboxStatus{
			Id: "s1", Metadata: &PodSandboxMetadata{Name: "p", Uid: "u", Namespace: "n", Attempt: 1},
			State: PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 7,
			Labels: map[string]string{"k": "v"}, Annotations: map[string]string{"kubernetes.io/config.source": "file"},
		},
		ContainersStatuses: []*ContainerStatus{wantStatus, {Id: "c2"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
	}

	sb := &runtimeapi.PodSandbox{Id: "s1", Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "u", Namespace: "n", Attempt: 2},
		State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 5, Labels: map[string]string{"a": "1"},
		Annotations: map[string]string{"b": "2"}, RuntimeHandler: "runc"}
	c := &runtimeapi.Container{Id: "c1", PodSandboxId: "s1", Metadata: meta, Image: img, ImageRef: "ref",
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: 6, Labels: map[string]string{"c": "3"},
		Annotations: map[string]string{"d": "4"}, ImageId: "id"}
	if b, err = proto.Marshal(&runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{sb, {}}}); err != nil {
		t.Fatal(err)
	}
	sbs, err := decodeList(b, 1, decodePodSandbox)
	if err != nil {
		t.Fatal(err)
	}
	wantSB := []*PodSandbox{{Id: "s1", Metadata: &PodSandboxMetadata{Name: "p", Uid: "u", Namespace: "n", Attempt: 2},
		State: PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 5, Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}}, {}}
	if !reflect.DeepEqual(sbs, wantSB) {
		t.Fatalf("sandboxes %+v, want %+v", sbs, wantSB)
	}
	if b, err = proto.Marshal(&runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{c}}); err != nil {
		t.Fatal(err)
	}
	cs, err := decodeList(b, 1, decodeContainer)
	if err != nil {
		t.Fatal(err)
	}
	wantC := []*Container{{Id: "c1", PodSandboxId: "s1", Metadata: &ContainerMetadata{Name: "etcd", Attempt: 3},
		Image: &ImageSpec{Image: "sha256:1", UserSpecifiedImage: "registry.k8s.io/etcd:3.6"}, ImageRef: "ref",
		State: ContainerState_CONTAINER_RUNNING, CreatedAt: 6, Labels: map[string]string{"c": "3"}, Annotations: map[string]string{"d": "4"}}}
	if !reflect.DeepEqual(cs, wantC) {
		t.Fatalf("containers %+v, want %+v", cs, wantC)
	}
}

// The requests written by hand are the generated ones, as a server reads
// them.
func TestRequestsAreWhatTheServerReads(t *testing.T) {
	ready, exited := PodSandboxState_SANDBOX_READY, ContainerState_CONTAINER_EXITED
	var sbReq runtimeapi.ListPodSandboxRequest
	if err := proto.Unmarshal(listPodSandboxRequest(&PodSandboxFilter{Id: "s", State: &ready, LabelSelector: map[string]string{"a": "1", "b": ""}}), &sbReq); err != nil {
		t.Fatal(err)
	}
	f := sbReq.GetFilter()
	if f.GetId() != "s" || f.GetState() == nil || f.GetState().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY ||
		!reflect.DeepEqual(f.GetLabelSelector(), map[string]string{"a": "1", "b": ""}) {
		t.Fatalf("ListPodSandboxRequest read as %v", &sbReq)
	}
	var cReq runtimeapi.ListContainersRequest
	if err := proto.Unmarshal(listContainersRequest(&ContainerFilter{State: &exited, PodSandboxId: "s"}), &cReq); err != nil {
		t.Fatal(err)
	}
	if cf := cReq.GetFilter(); cf.GetState().GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || cf.GetPodSandboxId() != "s" || cf.GetId() != "" {
		t.Fatalf("ListContainersRequest read as %v", &cReq)
	}
	if listPodSandboxRequest(nil) != nil || listContainersRequest(nil) != nil {
		t.Fatal("no filter is an empty request")
	}
	var stReq runtimeapi.ContainerStatusRequest
	if err := proto.Unmarshal(idRequest("c1"), &stReq); err != nil || stReq.GetContainerId() != "c1" || stReq.GetVerbose() {
		t.Fatalf("ContainerStatusRequest read as %v, %v", &stReq, err)
	}
}

// Truncated input is an error, not a panic or a partial value passed off
// as whole.
func TestDecodeRefusesTruncatedMessages(t *testing.T) {
	b, err := proto.Marshal(&runtimeapi.Container{Id: "c1", Metadata: &runtimeapi.ContainerMetadata{Name: "etcd"}, Labels: map[string]string{"a": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < len(b); n++ {
		var c Container
		if err := decodeContainer(b[:n], &c); err == nil && reflect.DeepEqual(c.Labels, map[string]string{"a": "b"}) && c.Metadata.GetName() == "etcd" && c.Id == "c1" {
			t.Fatalf("%d of %d bytes decoded whole", n, len(b))
		}
	}
}

// streamer is a runtime whose GetContainerEvents sends events and then
// ends with a status; every other call is Unimplemented.
type streamer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	events []*runtimeapi.ContainerEventResponse
	end    error
}

func (s *streamer) GetContainerEvents(_ *runtimeapi.GetEventsRequest, srv runtimeapi.RuntimeService_GetContainerEventsServer) error {
	for _, e := range s.events {
		if err := srv.Send(e); err != nil {
			return err
		}
	}
	return s.end
}

func serve(t *testing.T, rs runtimeapi.RuntimeServiceServer) string {
	t.Helper()
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, rs)
	sock := filepath.Join(t.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-served
	})
	return "unix://" + sock
}

// The stream's events arrive in order, and its end is the server's
// status: io.EOF for OK, the gRPC status otherwise, with its code.
func TestContainerEventsStreamThenEnd(t *testing.T) {
	events := []*runtimeapi.ContainerEventResponse{
		{ContainerId: "c1", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT},
		{ContainerId: "c2", PodSandboxStatus: &runtimeapi.PodSandboxStatus{Annotations: map[string]string{AnnotationConfigSource: ConfigSourceFile}}},
	}
	for name, tt := range map[string]struct {
		end  error
		code int // 0: io.EOF
	}{
		"ok":          {nil, 0},
		"unavailable": {grpcstatus.Error(codes.Unavailable, "runtime going away: 100%"), 14},
	} {
		t.Run(name, func(t *testing.T) {
			cl := newClient(t, serve(t, &streamer{events: events, end: tt.end}))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := cl.GetContainerEvents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e1, err := s.Recv()
			if err != nil || e1.GetContainerId() != "c1" || e1.GetContainerEventType() != ContainerEventType_CONTAINER_STARTED_EVENT {
				t.Fatalf("first event %+v, %v", e1, err)
			}
			e2, err := s.Recv()
			if err != nil || e2.GetContainerId() != "c2" || e2.GetPodSandboxStatus().GetAnnotations()[AnnotationConfigSource] != ConfigSourceFile {
				t.Fatalf("second event %+v, %v", e2, err)
			}
			_, err = s.Recv()
			var st *Status
			switch {
			case tt.code == 0 && !errors.Is(err, io.EOF):
				t.Fatalf("end of stream = %v, want io.EOF", err)
			case tt.code != 0 && (!errors.As(err, &st) || st.Code != tt.code || st.Message != "runtime going away: 100%"):
				t.Fatalf("end of stream = %#v, want code %d and the message", err, tt.code)
			}
			if _, again := s.Recv(); again == nil || again.Error() != err.Error() {
				t.Fatalf("Recv after the end = %v, want %v again", again, err)
			}
		})
	}
}

// A runtime without a call answers Unimplemented: the unary calls fail
// with that status, and the stream fails its first Recv, as gRPC's
// client has it.
func TestUnimplementedCalls(t *testing.T) {
	cl := newClient(t, serve(t, &runtimeapi.UnimplementedRuntimeServiceServer{}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var st *Status
	if _, err := cl.ListContainers(ctx, nil); !errors.As(err, &st) || st.Code != CodeUnimplemented {
		t.Fatalf("ListContainers = %v, want Unimplemented", err)
	}
	s, err := cl.GetContainerEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.As(err, &st) || st.Code != CodeUnimplemented {
		t.Fatalf("Recv = %v, want Unimplemented", err)
	}
}
