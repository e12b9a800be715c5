//go:build linux

package kubelet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// What the crash pod's container leaves in its termination message at
// every start, with its TOKEN, which no message of podwatch may show; and
// what the exits pod's leaves when it is made to exit.
const (
	crashToken   = "tok-3f9a1c77e2"
	crashMessage = "cannot reach https://10.96.0.1:443 with token " + crashToken + ": connection refused"
	exitsMessage = "lost the leader election"
)

// terminationLog is where the kubelet mounts a container's termination
// message file: the default terminationMessagePath.
const terminationLog = "/dev/termination-log"

// TestFollowerSaysTheMirrorPodsStatus runs the kubelet against a real API
// server, so it publishes each static pod's status in its mirror pod, and
// podwatch beside it with the RBAC of deploy/kubernetes, following through
// the fake CRI driven as in TestFollowerAgainstTheKubelet. What the
// runtime cannot say comes from the mirror pod: why the container of a
// pod whose image is not pulled waits, and a crash loop's reason and
// termination message (written into the host file the kubelet reads it
// from, as the container would), redacted. A container that exits with no
// manifest change gets its termination message on StaticPodRestarting.
func TestFollowerSaysTheMirrorPodsStatus(t *testing.T) {
	if testing.Short() {
		kubelet.Skip(t, "runs the real kubelet and kube-apiserver for about a minute")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, podwatchConfig, kubeletConfig := cluster(ctx, t, followNamespace)
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: followNode, Kubeconfig: kubeletConfig})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the fake CRI's calls that change something:\n%s", changingCalls(k.CRILog))
		}
	})
	var (
		mu      sync.Mutex
		failed  []error // the interceptor's, which runs on the CRI's goroutines
		figures []string
	)
	inner := drive(k)
	k.Intercept(func(ctx context.Context, method string, req any, call func() (any, error)) (any, error) {
		if r, ok := req.(*runtimeapi.ExecSyncRequest); ok && podOfContainer(k, r.GetContainerId()) == "unready-"+followNode {
			// The readiness probe's command fails, as a server that never
			// serves makes it.
			return &runtimeapi.ExecSyncResponse{ExitCode: 1, Stderr: []byte("not serving")}, nil
		}
		if r, ok := req.(*runtimeapi.StartContainerRequest); ok && podOfContainer(k, r.GetContainerId()) == "crash-"+followNode {
			if err := writeTermination(k, r.GetContainerId(), crashMessage); err != nil {
				mu.Lock()
				failed = append(failed, err)
				mu.Unlock()
			}
		}
		return inner(ctx, method, req, call)
	})
	pw := startFollower(ctx, t, k.Manifests, k.CRISocket, func(o *agent.Options) {
		o.Kube.Kubeconfig = podwatchConfig
	})
	record := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		figures = append(figures, fmt.Sprintf(format, args...))
	}

	t.Run("scenarios", func(t *testing.T) {
		// The image cannot be pulled: the runtime shows no container, the
		// mirror pod why (ErrImagePull or ImagePullBackOff, whichever the
		// kubelet shows at the deadline), with the runtime's error.
		t.Run("image-not-pulled", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "nopull", noPullImage)
			ev := pw.awaitNotStarted(ctx, t, "nopull", wrote,
				"container main not created (its image may not be pulled); the mirror pod's status: container main waiting: ", noPullImage)
			if m := ev.ev.Message; !strings.Contains(m, "waiting: ErrImagePull: ") && !strings.Contains(m, "waiting: ImagePullBackOff: ") {
				t.Errorf("StaticPodNotStarted says %q, want the kubelet's ErrImagePull or ImagePullBackOff", m)
			}
			record("image not pulled: write to StaticPodNotStarted %v: %s", ev.at.Sub(wrote).Round(time.Millisecond), ev.ev.Message)
		})
		// Every start exits at once with code 1, leaving its termination
		// message: CrashLoopBackOff, the code and the message, its token
		// redacted.
		t.Run("crash-loop", func(t *testing.T) {
			t.Parallel()
			wrote := writeManifest(t, k, "crash", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: crash
  namespace: %s
spec:
  containers:
  - name: main
    image: registry.example/app:1
    env:
    - name: TOKEN
      value: %s
`, followNamespace, crashToken))
			said := "last terminated with exit code 1 (Error): " + fmt.Sprintf("%q", strings.ReplaceAll(crashMessage, crashToken, "<redacted>"))
			ev := pw.awaitNotStarted(ctx, t, "crash", wrote, "container main exited with code 1 (Error); the mirror pod's status: container main ")
			record("crash loop: write to StaticPodNotStarted %v: %s", ev.at.Sub(wrote).Round(time.Millisecond), ev.ev.Message)
			// The kubelet generates the status at the start of each sync,
			// and requeues a crash-looping pod only when its back-off
			// ends, when it starts the container again: so its status
			// shows the last termination, and CrashLoopBackOff only when
			// something else made it sync the pod during the back-off.
			// Either is what the mirror pod says.
			if m := ev.ev.Message; !strings.Contains(m, "container main waiting: CrashLoopBackOff, "+said) && !strings.Contains(m, "container main "+said) {
				t.Errorf("StaticPodNotStarted says %q, want the last termination, after CrashLoopBackOff or not", m)
			}
			if strings.Contains(ev.ev.Message, crashToken) {
				t.Errorf("StaticPodNotStarted shows the pod's token: %q", ev.ev.Message)
			}
		})
		// The container runs, but its readiness probe never passes: the
		// runtime cannot tell, the kubelet's status in the mirror pod
		// does, and the pod is not started.
		t.Run("not-ready", func(t *testing.T) {
			t.Parallel()
			wrote := writeManifest(t, k, "unready", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: unready
  namespace: %s
spec:
  containers:
  - name: main
    image: registry.example/app:1
    readinessProbe:
      exec: {command: [/ready]}
      periodSeconds: 1
`, followNamespace))
			ev := pw.awaitNotStarted(ctx, t, "unready", wrote, "container main runs, but the kubelet's readiness probe has not passed (the mirror pod's status)")
			record("readiness probe failing: write to StaticPodNotStarted %v: %s", ev.at.Sub(wrote).Round(time.Millisecond), ev.ev.Message)
		})
		// A running container exits with no manifest change, leaving its
		// termination message: StaticPodRestarting says it.
		t.Run("container-exits", func(t *testing.T) {
			t.Parallel()
			wrote := pw.write(t, k, "exits", "registry.example/app:1")
			pw.await(ctx, t, "exits", types.ReasonStarted, wrote, 30*time.Second)
			if err := writeTermination(k, runningContainer(t, k, "exits-"+followNode), exitsMessage); err != nil {
				t.Fatal(err)
			}
			exited := exitRunning(t, k, "exits-"+followNode, 2, "Error")
			ev := pw.await(ctx, t, "exits", types.ReasonRestarting, exited, 60*time.Second,
				fmt.Sprintf("restarted with no manifest change; it exited with code 2 (Error); its termination message: %q", exitsMessage))
			record("container exits: exit to StaticPodRestarting %v: %s", ev.at.Sub(exited).Round(time.Millisecond), ev.ev.Message)
		})
	})
	mu.Lock()
	defer mu.Unlock()
	if err := errors.Join(failed...); err != nil {
		t.Errorf("writing the crash pod's termination message: %v", err)
	}
	if t.Failed() {
		t.Logf("podwatch printed:\n%s", pw.dump())
		return
	}
	t.Logf("follow deadline %v; measured:\n  %s", followDeadline, strings.Join(figures, "\n  "))
}

// podOfContainer is the pod name of the fake runtime's container id.
func podOfContainer(k *kubelet.Kubelet, id string) string {
	rs := k.Runtime()
	rs.Lock()
	defer rs.Unlock()
	if c := rs.Containers[id]; c != nil {
		return c.Labels["io.kubernetes.pod.name"]
	}
	return ""
}

// runningContainer is the ID of pod fullName's running container.
func runningContainer(t *testing.T, k *kubelet.Kubelet, fullName string) string {
	t.Helper()
	rs := k.Runtime()
	rs.Lock()
	defer rs.Unlock()
	for id, c := range rs.Containers {
		if c.Labels["io.kubernetes.pod.name"] == fullName && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return id
		}
	}
	t.Fatalf("no running container of %s", fullName)
	return ""
}

// writeTermination writes msg into container id's termination message
// file, as the container would: the host file the kubelet mounted at
// terminationLog and reads when the container has exited.
func writeTermination(k *kubelet.Kubelet, id, msg string) error {
	rs := k.Runtime()
	rs.Lock()
	var host string
	if c := rs.Containers[id]; c != nil {
		for _, m := range c.Mounts {
			if m.GetContainerPath() == terminationLog {
				host = m.GetHostPath()
			}
		}
	}
	rs.Unlock()
	if host == "" {
		return fmt.Errorf("container %s has no %s mount", id, terminationLog)
	}
	return os.WriteFile(k.InNamespace(host), []byte(msg), 0o644)
}
