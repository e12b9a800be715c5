package follow

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/types"
)

// serveCRI serves cri-client's fake runtime and returns it and a pkg/cri
// client of it.
func serveCRI(tb testing.TB) (*fake.RemoteRuntime, *cri.Client) {
	tb.Helper()
	f, endpoint := testutil.ServeFakeCRI(tb)
	c, err := cri.New(endpoint)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return f, c
}

// kubeletRuns does what the kubelet asks of the runtime for a static pod:
// a sandbox and started containers, with the kubelet's labels.
func kubeletRuns(tb testing.TB, f *fake.RemoteRuntime, name, uid string, containers ...string) (string, []string) {
	tb.Helper()
	ctx := context.Background()
	labels := map[string]string{cri.LabelPodName: name, cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: uid}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:    &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "kube-system", Uid: uid},
		Labels:      labels,
		Annotations: map[string]string{cri.AnnotationConfigSource: cri.ConfigSourceFile},
	}
	sb, err := f.RuntimeService.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, c := range containers {
		cl := map[string]string{cri.LabelContainerName: c}
		for k, v := range labels {
			cl[k] = v
		}
		id, err := f.RuntimeService.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: c},
			Image:    &runtimeapi.ImageSpec{Image: "registry.k8s.io/" + c + ":v1.37.2", UserSpecifiedImage: "registry.k8s.io/" + c + ":v1.37.2"},
			Labels:   cl,
		}, cfg)
		if err != nil {
			tb.Fatal(err)
		}
		if err := f.RuntimeService.StartContainer(ctx, id); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, id)
	}
	return sb, ids
}

// The follower on the real client and a real socket: a pod that starts,
// then a change whose container exits with an exit code.
func TestFollowThroughTheFakeCRI(t *testing.T) {
	f, client := serveCRI(t)
	clk := testingclock.NewFakeClock(time.Now())
	out := &emitted{}
	fl := New(Options{Deadline: deadline}, client, clk, nil, out.emit, nil, nil)
	ctx := context.Background()
	change := func(op types.Op) {
		fl.Submit([]types.Change{{Op: op, Object: types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: apiserver},
			File: "kube-apiserver.yaml", Pod: apiPod(""), At: clk.Now()}})
	}

	change(types.OpAdd)
	fl.step(ctx)
	none(t, out.take())
	kubeletRuns(t, f, apiserver, "uid-1", "kube-apiserver")
	clk.Step(time.Second)
	fl.step(ctx)
	one(t, out.take(), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml")

	clk.SetTime(time.Now())
	change(types.OpUpdate)
	sb, ids := kubeletRuns(t, f, apiserver, "uid-2", "kube-apiserver")
	f.RuntimeService.Lock()
	c := f.RuntimeService.Containers[ids[0]]
	c.State, c.ExitCode, c.Reason = runtimeapi.ContainerState_CONTAINER_EXITED, 1, "Error"
	f.RuntimeService.Unlock()
	fl.step(ctx)
	none(t, out.take())
	clk.Step(deadline)
	fl.step(ctx)
	one(t, out.take(), types.ReasonNotStarted, v1.EventTypeWarning, "container kube-apiserver exited with code 1 (Error)")

	// The kubelet restarts it and it runs: the change is started after all.
	ctr := "kube-apiserver"
	id, err := f.RuntimeService.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: ctr, Attempt: 1},
		Image:    &runtimeapi.ImageSpec{Image: "img"},
		Labels:   map[string]string{cri.LabelContainerName: ctr, cri.LabelPodName: apiserver, cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: "uid-2"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.RuntimeService.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	clk.Step(deadline)
	fl.step(ctx)
	one(t, out.take(), types.ReasonStarted, v1.EventTypeNormal, "runs the change from kube-apiserver.yaml")
}

// BenchmarkIdlePoll is what following costs when nothing changes: one poll
// of a runtime running 50 static pods of two containers each, through the
// real client and socket (restarts are watched, no change is followed).
func BenchmarkIdlePoll(b *testing.B) {
	f, client := serveCRI(b)
	var known []string
	for i := range 50 {
		name := fmt.Sprintf("static-%02d-node-1", i)
		kubeletRuns(b, f, name, fmt.Sprintf("uid-%02d", i), "main", "sidecar")
		known = append(known, "kube-system/"+name)
	}
	out := &emitted{}
	fl := New(Options{}, client, testingclock.NewFakeClock(time.Now()), nil, out.emit, nil, known)
	ctx := context.Background()
	fl.step(ctx) // learn what runs, and connect
	b.ReportAllocs()
	for b.Loop() {
		fl.step(ctx)
	}
	if got := out.take(); len(got) != 0 {
		b.Fatalf("an idle poll reported %+v", got)
	}
}

// BenchmarkIdleStep is the follower's own part of an idle poll of 50
// static pods, on an in-process runtime: no gRPC, no server.
func BenchmarkIdleStep(b *testing.B) {
	rt := newFakeRuntime()
	var known []string
	for i := range 50 {
		name, sb := fmt.Sprintf("static-%02d-node-1", i), fmt.Sprintf("sb-%02d", i)
		rt.sandbox(sb, name, "uid-"+sb, t0, true)
		rt.container(sb, "main", "img", 0, t0)
		rt.container(sb, "sidecar", "img", 0, t0)
		known = append(known, "kube-system/"+name)
	}
	out := &emitted{}
	fl := New(Options{}, rt, testingclock.NewFakeClock(t0), nil, out.emit, nil, known)
	ctx := context.Background()
	fl.step(ctx)
	b.ReportAllocs()
	for b.Loop() {
		fl.step(ctx)
	}
	if got := out.take(); len(got) != 0 {
		b.Fatalf("an idle poll reported %+v", got)
	}
}
