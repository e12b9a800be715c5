//go:build linux

package kubelet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/follow"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// The follow scenarios' node, namespace and timings.
const (
	followNode      = "follow-node"
	followNamespace = "follow"
	// followDeadline is podwatch's --follow-deadline here: longer than the
	// kubelet takes for a restart (11-14 s), shorter than that plus
	// stopDelay.
	followDeadline = 20 * time.Second
	// stopDelay is how long the runtime takes to stop each container of
	// the pod whose new version must wait for the old one: longer than the
	// kubelet waits anyway before it starts a restarted pod's new UID, so
	// that the new pod is held up by it.
	stopDelay = 20 * time.Second
	// minRunning is --follow-min-running; flakyUptime is how long the flaky
	// pod's container runs before it crashes, each time: seen running, but
	// not for long enough.
	minRunning  = 3 * time.Second
	flakyUptime = time.Second
	// inPlaceDelay is how long the runtime takes to create the in-place
	// pod's new container: several polls, and longer than minRunning.
	inPlaceDelay = 5 * time.Second
	// noPullImage is an image whose pull the runtime refuses.
	noPullImage = "registry.invalid/never:1"
)

// TestFollowerAgainstTheKubelet runs the real kubelet on the fake CRI,
// driven into what the follower must tell apart, and podwatch beside it
// following every change through the same CRI, with no API server
// running: the kubelet runs standalone (no mirror pods), so what podwatch
// reports comes from the runtime alone, the case of a node whose API
// server is down. A second podwatch is given a kubeconfig for an API
// server that does not answer, and must report from the runtime all the
// same. The fake's GetContainerEvents returns at once: podwatch takes
// the runtime for one that does not stream, opens it again only with a
// backoff, and every verdict comes from its polls. Each
// scenario asserts the right Event within the time the kubelet needs, and
// logs the time from the manifest write (or the exit) to the Event.
func TestFollowerAgainstTheKubelet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: followNode})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the fake CRI's calls that change something:\n%s", changingCalls(k.CRILog))
		}
	})
	k.Intercept(drive(k))
	pw := startFollower(ctx, t, k.Manifests, k.CRISocket)
	// A second podwatch on the same folder and runtime sends its Events to
	// an API server that is down.
	down := startFollower(ctx, t, k.Manifests, k.CRISocket, func(o *agent.Options) {
		o.Kube.Kubeconfig = deadAPIServer(t)
	})

	var (
		mu      sync.Mutex
		figures []string
	)
	record := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		figures = append(figures, fmt.Sprintf(format, args...))
	}
	t.Run("scenarios", func(t *testing.T) {
		// A pod added and deleted: StaticPodStarted, then StaticPodStopped,
		// from the runtime alone (no API server here at all).
		t.Run("add-delete", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "standalone", "registry.example/app:1")
			started := pw.await(ctx, t, "standalone", types.ReasonStarted, wrote, 30*time.Second,
				"standalone-follow-node runs the change from standalone.yaml")
			record("add: write to StaticPodStarted %v (its message: %s)", started.at.Sub(wrote).Round(time.Millisecond), took(started))
			removed := time.Now()
			if err := os.Remove(filepath.Join(k.Manifests, "standalone.yaml")); err != nil {
				t.Fatal(err)
			}
			stopped := pw.await(ctx, t, "standalone", types.ReasonStopped, removed, 30*time.Second, "is stopped")
			record("delete: remove to StaticPodStopped %v", stopped.at.Sub(removed).Round(time.Millisecond))
		})
		// The API server is down: podwatch's writes to it fail, and the
		// runtime still tells it the change runs.
		t.Run("api-server-down", func(t *testing.T) {
			t.Parallel()
			wrote := down.write(t, k, "apidown", "registry.example/app:1")
			started := down.await(ctx, t, "apidown", types.ReasonStarted, wrote, 30*time.Second,
				"apidown-follow-node runs the change from apidown.yaml")
			record("API server down: write to StaticPodStarted %v (its message: %s)", started.at.Sub(wrote).Round(time.Millisecond), took(started))
			mfs := down.scrape(t)
			if got := testutil.MetricValue(mfs, "podwatch_event_sink_writes_total", "sink", "api"); got != 0 {
				t.Errorf("podwatch_event_sink_writes_total{sink=api} = %v, want 0: the API server was up", got)
			}
			failed := 0.0
			for _, m := range mfs["podwatch_event_sink_write_errors_total"].GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "sink" && l.GetValue() == "api" {
						failed += m.GetCounter().GetValue()
					}
				}
			}
			if failed == 0 {
				t.Error("no failed write to the API server: podwatch did not try it")
			}
		})
		// A running container exits with no manifest change: the kubelet
		// restarts it, and podwatch says so with the exit code and reason.
		t.Run("container-exits", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "exits", "registry.example/app:1")
			pw.await(ctx, t, "exits", types.ReasonStarted, wrote, 30*time.Second)
			exited := exitRunning(t, k, "exits-"+followNode, 137, "OOMKilled")
			ev := pw.await(ctx, t, "exits", types.ReasonRestarting, exited, 60*time.Second,
				"container main of exits-follow-node", "restarted with no manifest change; it exited with code 137 (OOMKilled)")
			record("container exits: exit to StaticPodRestarting %v", ev.at.Sub(exited).Round(time.Millisecond))
		})
		// Every start of the container exits at once with code 1: past the
		// deadline, StaticPodNotStarted with the code and reason.
		t.Run("crash-loop", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "crash", "registry.example/app:1")
			ev := pw.awaitNotStarted(ctx, t, "crash", wrote, "container main exited with code 1 (Error)")
			record("crash loop: write to StaticPodNotStarted %v: %s", ev.at.Sub(wrote).Round(time.Millisecond), ev.ev.Message)
		})
		// Every start of the container runs for a second, then it exits
		// with code 1: polls see it running, but it did not start the pod.
		t.Run("crash-after-start", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "flaky", "registry.example/app:1")
			ev := pw.awaitNotStarted(ctx, t, "flaky", wrote, "container main")
			record("crash %v after each start: write to StaticPodNotStarted %v: %s", flakyUptime, ev.at.Sub(wrote).Round(time.Millisecond), ev.ev.Message)
		})
		// The image cannot be pulled: the sandbox runs, the container is
		// never created. The kubelet's waiting reason (ErrImagePull, then
		// ImagePullBackOff) lives in the pod status only, which a
		// standalone kubelet publishes nowhere; what the runtime shows is
		// said.
		t.Run("image-not-pulled", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "nopull", noPullImage)
			ev := pw.awaitNotStarted(ctx, t, "nopull", wrote, "container main not created (its image may not be pulled)")
			record("image not pulled: write to StaticPodNotStarted %v: %s", ev.at.Sub(wrote).Round(time.Millisecond), ev.ev.Message)
		})
		// An edit restarts the pod; the baseline for the next.
		t.Run("edit", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "edit", "registry.example/app:1")
			pw.await(ctx, t, "edit", types.ReasonStarted, wrote, 30*time.Second)
			edited := pw.write(t, k, "edit", "registry.example/app:2")
			ev := pw.await(ctx, t, "edit", types.ReasonStarted, edited, followDeadline+30*time.Second)
			record("edit: write to StaticPodStarted %v (its message: %s)", ev.at.Sub(edited).Round(time.Millisecond), took(ev))
		})
		// An edit in place: the manifest pins metadata.uid, so the kubelet
		// keeps the pod and its sandbox and restarts only the container
		// whose image changed. The runtime leaves out the image the kubelet
		// asked for (drive strips it from ListContainers, as some runtimes
		// do), so podwatch must tell the new container by its ID and hash:
		// StaticPodStarted comes only once the kubelet created it.
		t.Run("edit-in-place", func(t *testing.T) {
			t.Parallel()
			wrote := pw.writePinned(t, k, "inplace", "registry.example/app:1")
			pw.await(ctx, t, "inplace", types.ReasonStarted, wrote, 30*time.Second)
			before := containersOf(k, "inplace-"+followNode)
			edited := pw.writePinned(t, k, "inplace", "registry.example/app:2")
			ev := pw.await(ctx, t, "inplace", types.ReasonStarted, edited, followDeadline+30*time.Second)
			var fresh *runtimeapi.Container
			for _, c := range containersOf(k, "inplace-"+followNode) {
				if before[c.GetId()] == nil && c.GetImage().GetUserSpecifiedImage() == "registry.example/app:2" {
					fresh = c
				}
			}
			switch {
			case fresh == nil:
				t.Fatalf("StaticPodStarted (%s) but the kubelet made no container of the new image", ev.ev.Message)
			case time.Unix(0, fresh.GetCreatedAt()).After(ev.at):
				t.Errorf("StaticPodStarted at %s, before the new container was created at %s",
					ev.at.Format("15:04:05.000"), time.Unix(0, fresh.GetCreatedAt()).Format("15:04:05.000"))
			case fresh.GetAnnotations()["io.kubernetes.container.hash"] != follow.ContainerHash("main", "registry.example/app:2"):
				t.Errorf("the new container's hash %q is not ContainerHash of its image", fresh.GetAnnotations()["io.kubernetes.container.hash"])
			}
			if len(sandboxesOf(k, "inplace-"+followNode)) != 1 {
				t.Errorf("the kubelet made a new sandbox for an in-place edit: %d", len(sandboxesOf(k, "inplace-"+followNode)))
			}
			record("edit in place: write to StaticPodStarted %v, new container created %v after the write (its message: %s)",
				ev.at.Sub(edited).Round(time.Millisecond), time.Unix(0, fresh.GetCreatedAt()).Sub(edited).Round(time.Millisecond), took(ev))
		})
		// An edit whose new pod waits for the old one, whose containers
		// take stopDelay to stop: past the deadline StaticPodNotStarted
		// says no new sandbox is there, then StaticPodStarted comes, its
		// time including the delay.
		t.Run("edit-waits-for-old", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "slowstop", "registry.example/app:1")
			pw.await(ctx, t, "slowstop", types.ReasonStarted, wrote, 30*time.Second)
			edited := pw.write(t, k, "slowstop", "registry.example/app:2")
			ev := pw.await(ctx, t, "slowstop", types.ReasonStarted, edited, followDeadline+stopDelay+30*time.Second)
			if d := ev.at.Sub(edited); d < stopDelay {
				t.Errorf("StaticPodStarted %v after the edit, before the old pod could stop (%v)", d, stopDelay)
			}
			// The deadline passes while the old pod still stops.
			n, ok := pw.first("slowstop", types.ReasonNotStarted, edited)
			switch {
			case !ok:
				t.Errorf("no StaticPodNotStarted while the old pod took %v to stop, past the deadline %v", stopDelay, followDeadline)
			case n.at.Sub(edited) < followDeadline || n.at.After(ev.at):
				t.Errorf("StaticPodNotStarted %v after the edit, want past the deadline %v and before StaticPodStarted", n.at.Sub(edited), followDeadline)
			case !strings.Contains(n.ev.Message, "no sandbox created since the change"):
				t.Errorf("StaticPodNotStarted says %q, want no sandbox since the change", n.ev.Message)
			default:
				record("edit waiting for the old pod: write to StaticPodNotStarted %v: %s", n.at.Sub(edited).Round(time.Millisecond), n.ev.Message)
			}
			record("edit waiting for the old pod (stop %v per container): write to StaticPodStarted %v (its message: %s)",
				stopDelay, ev.at.Sub(edited).Round(time.Millisecond), took(ev))
		})
	})
	if t.Failed() {
		t.Logf("podwatch printed:\n%s", pw.dump())
		return
	}
	// podwatch's metrics say what is overdue now: the two crash loops and
	// the image never pulled, each by its cause.
	mfs := pw.scrape(t)
	overdue := func(c types.FollowCause) float64 {
		return testutil.MetricValue(mfs, "podwatch_follow_overdue_pods", "reason", types.ReasonNotStarted, "cause", string(c))
	}
	if got := overdue(types.CauseContainerNotCreated); got != 1 {
		t.Errorf("podwatch_follow_overdue_pods{cause=container_not_created} = %v, want 1", got)
	}
	// The crash loop's container is exited; the flaky one's exited or
	// up for less than minRunning, whichever the last poll saw. Under load
	// another scenario's pod may be past its deadline still.
	if got := overdue(types.CauseContainerExited) + overdue(types.CauseContainerNotRunning); got < 2 {
		t.Errorf("podwatch_follow_overdue_pods{cause=container_exited|container_not_running} = %v, want the 2 crash loops at least", got)
	}
	if got := testutil.MetricValue(mfs, "podwatch_follow_duration_seconds", "reason", types.ReasonStarted); got < 5 {
		t.Errorf("podwatch_follow_duration_seconds{reason=StaticPodStarted} has %v samples, want the 5 starts", got)
	}
	t.Logf("follow deadline %v; measured:\n  %s", followDeadline, strings.Join(figures, "\n  "))
}

// drive is how the fake CRI behaves for the scenarios' pods: the crash
// pod's container exits at every start, the flaky pod's flakyUptime after
// it, the image noPullImage is never pulled, the slowstop pod's
// containers take stopDelay to stop, and the inplace pod's new container
// takes inPlaceDelay to create and is listed without the image the
// kubelet asked for.
func drive(k *kubelet.Kubelet) kubelet.Interceptor {
	rs := k.Runtime()
	podOf := func(id string) string {
		rs.Lock()
		defer rs.Unlock()
		if c := rs.Containers[id]; c != nil {
			return c.Labels["io.kubernetes.pod.name"]
		}
		return ""
	}
	return func(ctx context.Context, method string, req any, call func() (any, error)) (any, error) {
		switch r := req.(type) {
		case *runtimeapi.PullImageRequest:
			if r.GetImage().GetImage() == noPullImage {
				return nil, fmt.Errorf("pull access denied for %s: repository does not exist", noPullImage)
			}
		case *runtimeapi.StartContainerRequest:
			if podOf(r.GetContainerId()) == "crash-"+followNode {
				// Started and exited under one lock, so that no poll ever
				// sees it running.
				rs.Lock()
				defer rs.Unlock()
				c := rs.Containers[r.GetContainerId()]
				now := time.Now().UnixNano()
				c.State, c.StartedAt, c.FinishedAt, c.ExitCode, c.Reason = runtimeapi.ContainerState_CONTAINER_EXITED, now, now, 1, "Error"
				return &runtimeapi.StartContainerResponse{}, nil
			}
			if podOf(r.GetContainerId()) == "flaky-"+followNode {
				resp, err := call()
				if err == nil {
					id := r.GetContainerId()
					// The crash the scenario is about, not a wait for a condition.
					time.AfterFunc(flakyUptime, func() {
						rs.Lock()
						defer rs.Unlock()
						if c := rs.Containers[id]; c != nil && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
							c.State, c.FinishedAt, c.ExitCode, c.Reason = runtimeapi.ContainerState_CONTAINER_EXITED, time.Now().UnixNano(), 1, "Error"
						}
					})
				}
				return resp, err
			}
		case *runtimeapi.CreateContainerRequest:
			// The in-place pod's new container comes late, so that a
			// verdict on the old one would come first.
			if r.GetConfig().GetLabels()["io.kubernetes.pod.name"] == "inplace-"+followNode && r.GetConfig().GetImage().GetUserSpecifiedImage() == "registry.example/app:2" {
				select {
				case <-time.After(inPlaceDelay): // the runtime's delay under test, not a wait for a condition
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		case *runtimeapi.ListContainersRequest:
			// The in-place pod's containers come back without the image
			// the kubelet asked for.
			resp, err := call()
			if err != nil {
				return resp, err
			}
			for _, c := range resp.(*runtimeapi.ListContainersResponse).GetContainers() {
				if c.GetLabels()["io.kubernetes.pod.name"] == "inplace-"+followNode {
					c.Image = &runtimeapi.ImageSpec{Image: c.GetImage().GetImage()}
				}
			}
			return resp, nil
		case *runtimeapi.StopContainerRequest:
			if podOf(r.GetContainerId()) == "slowstop-"+followNode {
				select {
				case <-time.After(stopDelay): // the runtime's delay under test, not a wait for a condition
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		return call()
	}
}

// exitRunning makes the running container of pod fullName exit with code
// and reason, as a crash would, and returns when.
func exitRunning(t *testing.T, k *kubelet.Kubelet, fullName string, code int32, reason string) time.Time {
	t.Helper()
	rs := k.Runtime()
	rs.Lock()
	defer rs.Unlock()
	for _, c := range rs.Containers {
		if c.Labels["io.kubernetes.pod.name"] == fullName && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			now := time.Now()
			c.State, c.FinishedAt, c.ExitCode, c.Reason = runtimeapi.ContainerState_CONTAINER_EXITED, now.UnixNano(), code, reason
			return now
		}
	}
	t.Fatalf("no running container of %s", fullName)
	return time.Time{}
}

// changingCalls are the lines of the fake CRI's call log other than
// reads, which podwatch's polls fill it with.
func changingCalls(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.Contains(l, "/List") && !strings.Contains(l, "Status err") && !strings.Contains(l, "/Version") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// took is the time StaticPodStarted's message gives, from the change as
// podwatch saw it to the runtime's creation of the pod.
func took(l printed) string {
	_, after, ok := strings.Cut(l.ev.Message, ".yaml ")
	if !ok {
		return l.ev.Message
	}
	return strings.TrimSuffix(after, " after it was written")
}

// followAgent is podwatch run in this process with a short
// --follow-deadline, its stdout's Events kept with when each was printed.
type followAgent struct {
	mu      sync.Mutex
	lines   []printed
	buf     []byte
	changed chan struct{} // closed and replaced on every Event
	metrics string        // base URL of its /metrics
	client  *http.Client
	logs    *testutil.LockedBuffer // its log
}

type printed struct {
	at time.Time
	ev v1.Event
}

// deadAPIServer is a kubeconfig for an API server that is down: a
// loopback port nothing listens on any more.
func deadAPIServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: down
  cluster: {server: "https://%s", insecure-skip-tls-verify: true}
users:
- name: podwatch
  user: {token: podwatch}
contexts:
- name: down
  context: {cluster: down, user: podwatch}
current-context: down
`, addr)
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// startFollower runs podwatch on path, following through criSocket; more
// change its options.
func startFollower(ctx context.Context, t *testing.T, path, criSocket string, more ...func(*agent.Options)) *followAgent {
	t.Helper()
	opts := agent.DefaultOptions()
	opts.RuntimeEndpoint = "unix://" + criSocket
	opts.Follow = follow.Options{Deadline: followDeadline, PollInterval: 200 * time.Millisecond, IdlePollInterval: time.Second, MinRunning: minRunning}
	opts.Source.Path = path
	opts.Source.FileCheckFrequency = 2 * time.Second // the kubelet's, in kubelet.Start
	opts.Source.SettleDelay = 100 * time.Millisecond
	opts.NodeName = followNode
	opts.Output = "json"
	opts.StateDir = t.TempDir()
	opts.Metrics.BindAddress = "127.0.0.1:0"
	addrs := make(chan net.Addr, 1)
	opts.OnMetricsListen = func(a net.Addr) { addrs <- a }
	for _, f := range more {
		f(&opts)
	}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.LockedBuffer{}
	a := &followAgent{changed: make(chan struct{}), client: &http.Client{Timeout: 10 * time.Second}, logs: logs}
	// Cleanups run last first: the log is shown once podwatch stopped.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("podwatch's log:\n%s", logs.String())
		}
	})
	exited := runAgent(ctx, t, opts, agent.Env{Stdout: a, Log: slog.New(slog.NewTextHandler(logs, nil)), Version: "follow-judge"})
	t.Cleanup(a.client.CloseIdleConnections)
	select {
	case addr := <-addrs:
		a.metrics = "http://" + addr.String()
	case <-exited:
		t.Fatal("podwatch stopped at start")
	case <-ctx.Done():
		t.Fatal("podwatch did not listen")
	}
	// Changes written from here on are changes, not what was there at start.
	for !strings.Contains(logs.String(), "watching manifest path") {
		select {
		case <-ctx.Done():
			t.Fatalf("podwatch never watched %s:\n%s", path, logs.String())
		case <-time.After(20 * time.Millisecond): // polling a condition, not waiting for time
		}
	}
	return a
}

func (a *followAgent) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	a.buf = append(a.buf, b...)
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		var ev v1.Event
		if err := json.Unmarshal(a.buf[:i], &ev); err != nil {
			return 0, fmt.Errorf("podwatch printed a line that is not a v1 Event: %w: %s", err, a.buf[:i])
		}
		a.lines = append(a.lines, printed{at: now, ev: ev})
		a.buf = a.buf[i+1:]
	}
	close(a.changed)
	a.changed = make(chan struct{})
	return len(b), nil
}

// write writes the pod name's manifest, name.yaml, with one container of
// image, and returns when.
func (a *followAgent) write(t *testing.T, k *kubelet.Kubelet, name, image string) time.Time {
	t.Helper()
	return writeManifest(t, k, name, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: main\n    image: %s\n",
		name, followNamespace, image))
}

// writePinned writes the pod name's manifest, name.yaml, with one
// container of image and metadata.uid set, so that an edit is made in
// place, and returns when.
func (a *followAgent) writePinned(t *testing.T, k *kubelet.Kubelet, name, image string) time.Time {
	t.Helper()
	return writeManifest(t, k, name, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  uid: %s-pinned-uid\nspec:\n  containers:\n  - name: main\n    image: %s\n",
		name, followNamespace, name, image))
}

// containersOf are the fake CRI's containers of pod fullName, copied, by
// ID.
func containersOf(k *kubelet.Kubelet, fullName string) map[string]*runtimeapi.Container {
	rs := k.Runtime()
	rs.Lock()
	defer rs.Unlock()
	out := map[string]*runtimeapi.Container{}
	for id, c := range rs.Containers {
		if c.Labels["io.kubernetes.pod.name"] == fullName {
			out[id] = &runtimeapi.Container{Id: c.Id, CreatedAt: c.CreatedAt, Image: c.Image, Annotations: c.Annotations}
		}
	}
	return out
}

func sandboxesOf(k *kubelet.Kubelet, fullName string) []string {
	rs := k.Runtime()
	rs.Lock()
	defer rs.Unlock()
	var out []string
	for id, sb := range rs.Sandboxes {
		if sb.Labels["io.kubernetes.pod.name"] == fullName {
			out = append(out, id)
		}
	}
	return out
}

// writeManifest writes manifest as the pod name's, name.yaml, and returns
// when.
func writeManifest(t *testing.T, k *kubelet.Kubelet, name, manifest string) time.Time {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(k.Manifests), name+".yaml")
	if err := os.WriteFile(tmp, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	// Renamed into the folder, as an installer does: one event, whole.
	at := time.Now()
	if err := os.Rename(tmp, filepath.Join(k.Manifests, name+".yaml")); err != nil {
		t.Fatal(err)
	}
	return at
}

// first is the first Event of reason about pod name printed at or after
// since.
func (a *followAgent) first(name, reason string, since time.Time) (printed, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.lines {
		o := l.ev.InvolvedObject
		if l.ev.Reason == reason && o.Namespace == followNamespace && o.Name == name+"-"+followNode && !l.at.Before(since) {
			return l, true
		}
	}
	return printed{}, false
}

// await waits up to limit after since for the first Event of reason
// about pod name, whose message must hold every part.
func (a *followAgent) await(ctx context.Context, t *testing.T, name, reason string, since time.Time, limit time.Duration, parts ...string) printed {
	t.Helper()
	wctx, cancel := context.WithDeadline(ctx, since.Add(limit))
	defer cancel()
	for {
		a.mu.Lock()
		ch := a.changed
		a.mu.Unlock()
		if l, ok := a.first(name, reason, since); ok {
			for _, p := range parts {
				if !strings.Contains(l.ev.Message, p) {
					t.Errorf("%s %s says %q, want %q in it", name, reason, l.ev.Message, p)
				}
			}
			return l
		}
		select {
		case <-ch:
		case <-wctx.Done():
			t.Fatalf("no %s about %s within %v: %v; podwatch printed:\n%s", reason, name, limit, context.Cause(wctx), a.dump())
		}
	}
}

// awaitNotStarted waits for StaticPodNotStarted about pod name: not before
// the deadline, and at most a few polls after it, with no StaticPodStarted.
func (a *followAgent) awaitNotStarted(ctx context.Context, t *testing.T, name string, since time.Time, parts ...string) printed {
	t.Helper()
	l := a.await(ctx, t, name, types.ReasonNotStarted, since, followDeadline+10*time.Second, parts...)
	if d := l.at.Sub(since); d < followDeadline {
		t.Errorf("StaticPodNotStarted %v after the write, before the deadline %v", d, followDeadline)
	}
	if s, ok := a.first(name, types.ReasonStarted, since); ok {
		t.Errorf("StaticPodStarted about a pod that never ran: %s", s.ev.Message)
	}
	return l
}

func (a *followAgent) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	return testutil.ScrapeMetrics(t, a.client, a.metrics)
}

func (a *followAgent) dump() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, l := range a.lines {
		fmt.Fprintf(&b, "  %s %s %s/%s x%d: %s\n", l.at.Format("15:04:05.000"), l.ev.Reason, l.ev.InvolvedObject.Namespace, l.ev.InvolvedObject.Name, l.ev.Count, l.ev.Message)
	}
	return b.String()
}
