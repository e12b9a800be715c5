//go:build linux

package followcost

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

const (
	pods = 50
	node = "node-1"
)

// fakeRuntime is the fake runtime on a socket, with a count of the
// ListContainers calls it answered (one per poll of podwatch's) and a
// channel told of each without blocking.
type fakeRuntime struct {
	fake     *fake.RemoteRuntime
	endpoint string
	lists    atomic.Int64
	listed   chan struct{}
}

func serve(b *testing.B) *fakeRuntime {
	b.Helper()
	r := &fakeRuntime{fake: fake.NewFakeRemoteRuntime(), listed: make(chan struct{}, 1)}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if strings.HasSuffix(info.FullMethod, "/ListContainers") {
			r.lists.Add(1)
			select {
			case r.listed <- struct{}{}:
			default:
			}
		}
		return resp, err
	}))
	runtimeapi.RegisterRuntimeServiceServer(srv, r.fake)
	runtimeapi.RegisterImageServiceServer(srv, r.fake) // crictl checks it is there
	sock := filepath.Join(b.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	b.Cleanup(func() {
		srv.Stop()
		<-served
	})
	r.endpoint = "unix://" + sock
	return r
}

// runPods does what the kubelet asks of the runtime for each static pod: a
// sandbox and two started containers, with the kubelet's labels.
func (r *fakeRuntime) runPods(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	for i := range pods {
		name, uid := podName(i)+"-"+node, fmt.Sprintf("uid-%02d", i)
		labels := map[string]string{cri.LabelPodName: name, cri.LabelPodNamespace: "kube-system", cri.LabelPodUID: uid}
		cfg := &runtimeapi.PodSandboxConfig{
			Metadata:    &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "kube-system", Uid: uid},
			Labels:      labels,
			Annotations: map[string]string{cri.AnnotationConfigSource: cri.ConfigSourceFile},
		}
		sb, err := r.fake.RuntimeService.RunPodSandbox(ctx, cfg, "")
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []string{"main", "sidecar"} {
			cl := map[string]string{cri.LabelContainerName: c}
			for k, v := range labels {
				cl[k] = v
			}
			id, err := r.fake.RuntimeService.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
				Metadata: &runtimeapi.ContainerMetadata{Name: c},
				Image:    &runtimeapi.ImageSpec{Image: image(c), UserSpecifiedImage: image(c)},
				Labels:   cl,
			}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.fake.RuntimeService.StartContainer(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func podName(i int) string { return fmt.Sprintf("static-%02d", i) }

func image(c string) string { return "registry.k8s.io/" + c + ":v1.37.2" }

// writeManifests writes the static pods' manifests and returns their folder.
func writeManifests(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	for i := range pods {
		m := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: kube-system\nspec:\n  containers:\n  - name: main\n    image: %s\n  - name: sidecar\n    image: %s\n",
			podName(i), image("main"), image("sidecar"))
		p := filepath.Join(dir, podName(i)+".yaml")
		if err := os.WriteFile(p, []byte(m), 0o600); err != nil {
			b.Fatal(err)
		}
		// Written long before, as on a node: each pod is found at
		// podwatch's first start, none waits to settle.
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// waitFor reads podwatch's stdout until n lines contain reason.
func waitFor(b *testing.B, out *bufio.Scanner, reason string, n int) {
	b.Helper()
	for seen := 0; seen < n; {
		if !out.Scan() {
			b.Fatalf("podwatch's output ended after %d of %d %s: %v", seen, n, reason, out.Err())
		}
		if strings.Contains(out.Text(), " "+reason+" ") {
			seen++
		}
	}
}

// BenchmarkPodwatchIdlePoll is podwatch, the built binary, following 50
// static pods that all run, from the end of one idle poll to the end of
// the next: what following costs per --follow-idle-poll-interval. At the
// default 10s an iteration takes those ten seconds (the default -benchtime
// runs one); at 25ms it is nearly the poll alone, without the ten seconds of the agent's idle work
// between two polls (the relist of the folder is kept out of both by a
// long --file-check-frequency: it is the agent's work with or without
// following). cpu-ms/period is the CPU time of the whole process over the
// periods divided by their number; rss-MB is the whole agent's resident
// memory, not the follower's alone. ns/op is the period as it ran.
func BenchmarkPodwatchIdlePoll(b *testing.B) {
	podwatch := filepath.Join(b.TempDir(), "podwatch")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", podwatch, "./cmd/podwatch")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, interval := range []time.Duration{10 * time.Second, 25 * time.Millisecond} {
		b.Run("interval="+interval.String(), func(b *testing.B) { idlePolls(b, podwatch, interval) })
	}
}

func idlePolls(b *testing.B, podwatch string, interval time.Duration) {
	r := serve(b)
	cmd := exec.Command(podwatch,
		"--path", writeManifests(b), "--node-name", node,
		"--state-dir", filepath.Join(b.TempDir(), "state"), "--metrics-bind-address", "0",
		"--container-runtime-endpoint", r.endpoint,
		"--follow-poll-interval", interval.String(), "--follow-idle-poll-interval", interval.String(),
		"--follow-min-running", "0",
		// The relist of the folder is the agent's work with or without
		// following; a long period keeps it out of the polls' CPU.
		"--file-check-frequency", "1h")
	// A pipe of the test's own, not StdoutPipe: its reads may go on
	// while Wait runs.
	stdout, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = cmd.Wait()
	}()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		stdout.Close()
		if b.Failed() {
			b.Logf("podwatch's stderr:\n%s", stderr.String())
		}
	})
	// poll waits for podwatch's next ListContainers.
	poll := func() {
		select {
		case <-r.listed:
		case <-exited:
			b.Fatalf("podwatch exited: %v", cmd.ProcessState)
		}
	}
	// The kubelet's order: the manifests are read (podwatch, at its first
	// start, finds the pods not running yet), then the pods run (podwatch
	// reports them started); from then on nothing changes and each poll
	// is an idle one.
	out := bufio.NewScanner(stdout)
	waitFor(b, out, "StaticPodFound", pods)
	r.runPods(b)
	waitFor(b, out, "StaticPodStarted", pods)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	// The poll that saw the last pod start may have signalled already;
	// the next one is idle from its start, and the periods start at its
	// end.
	select {
	case <-r.listed:
	default:
	}
	poll()
	lists, cpu := r.lists.Load(), cpuTime(b, cmd.Process.Pid)
	for b.Loop() {
		poll()
	}
	polls, used := r.lists.Load()-lists, cpuTime(b, cmd.Process.Pid)-cpu
	if polls == 0 {
		b.Fatal("podwatch did not poll")
	}
	rss, hwm := memory(b, cmd.Process.Pid)
	b.ReportMetric(float64(used.Microseconds())/1000/float64(polls), "cpu-ms/period")
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(hwm, "peak-rss-MB")
}

// BenchmarkCrictlPs is one run of crictl ps against the same 50 pods, what
// an operator's loop or a node check running it every 10 s pays per period:
// the CPU time (user and system) and peak resident memory of the process.
func BenchmarkCrictlPs(b *testing.B) {
	crictl, err := apiserver.BuildCrictl()
	if err != nil {
		b.Fatal(err)
	}
	r := serve(b)
	r.runPods(b)
	config := filepath.Join(b.TempDir(), "crictl.yaml") // none of the host's
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	var maxRSS int64
	runs := 0
	for b.Loop() {
		cmd := exec.Command(crictl, "--config", config, "--runtime-endpoint", r.endpoint, "ps")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("crictl ps: %v\n%s", err, stderr.String())
		}
		if runs == 0 {
			if n := strings.Count(stdout.String(), "\n"); n != 1+2*pods {
				b.Fatalf("crictl ps printed %d lines, want a header and %d containers:\n%s", n, 2*pods, stdout.String())
			}
		}
		runs++
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss // KiB on Linux
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(runs), "cpu-ms/period")
	b.ReportMetric(float64(maxRSS)*1024/1e6, "peak-rss-MB")
}

// cpuTime is the time the process's threads have run, from
// /proc/PID/task/*/schedstat, in nanoseconds rather than /proc/PID/stat's
// clock ticks.
func cpuTime(b *testing.B, pid int) time.Duration {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("podwatch's threads: %v", err)
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			b.Fatalf("%s: empty", t)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", t, err)
		}
		sum += time.Duration(ns)
	}
	return sum
}

// memory is the process's resident memory and its peak, in MB, from
// /proc/PID/status.
func memory(b *testing.B, pid int) (rss, hwm float64) {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	kib := func(field string) float64 {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, field+":"); ok {
				n, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				if err != nil {
					b.Fatalf("/proc/%d/status %s: %v", pid, field, err)
				}
				return n
			}
		}
		b.Fatalf("/proc/%d/status has no %s", pid, field)
		return 0
	}
	return kib("VmRSS") * 1024 / 1e6, kib("VmHWM") * 1024 / 1e6
}
