//go:build linux

package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/apiserver"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// warningsDeadline is podwatch's --follow-deadline in the warnings
// transcript: past the kubelet's periodic push of pod statuses (every
// 10 s), which is what brings the crashed container's status to the mirror
// pod when the kubelet made it after the status changed, so that every
// StaticPodNotStarted says it; and longer than the new container needs to
// count as started once the restart is let through, so that the warning is
// said exactly twice.
const warningsDeadline = 15 * time.Second

// TestDescribeShowsTheWarnings is TestDescribeShowsTheKubeletsWork for a
// static pod that fails: its container exits with code 1 at its first
// start, and the runtime holds the kubelet's restart until podwatch has
// said StaticPodNotStarted twice, so that the kubelet's status, in the
// mirror pod, stays what it says then (a crash loop's status alternates
// between the last termination and CrashLoopBackOff from one sync to the
// next, and each is another message, so another Event). Then the restart
// runs, StaticPodStarted, and the running container is made to exit twice:
// StaticPodRestarting, counted twice. What `kubectl describe pod` shows is
// docs/events.md's second transcript, testdata/describe-warnings.golden.
func TestDescribeShowsTheWarnings(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real kubelet and kube-apiserver for about a minute")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, podwatchConfig, kubeletConfig := cluster(ctx, t)
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: describeNode, Kubeconfig: kubeletConfig})
	const ns, pod = "kube-system", "web-" + describeNode
	release := make(chan struct{})
	k.Intercept(failFirstStart(k, pod, release))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the fake CRI's calls that change something:\n%s", changingCalls(k.CRILog))
		}
	})
	pw := startPodwatch(t, k.Manifests, describeNode, k.CRISocket, func(o *agent.Options) {
		o.Kube.Kubeconfig = podwatchConfig
		o.Follow.Deadline = warningsDeadline
		o.Follow.MinRunning = time.Second
	})
	admin, err := kubernetes.NewForConfig(s.Config(apiserver.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	step := func(what string, cond func([]v1.Event) bool) {
		t.Helper()
		if err := pw.wait(ctx, cond); err != nil {
			t.Fatalf("%s: %v\npodwatch said:\n%s", what, err, pw.dump(t))
		}
	}

	// The kubelet makes a mirror pod only once its Node is registered;
	// before that the pod's status reaches no API object, and the first
	// warning could not say it.
	waitNodeReady(ctx, t, admin, describeNode)
	writeManifest(t, k, "web", webManifest("registry.example/web:1")) // whole, as in describe_test.go
	// One Event said twice: the same message, its count grown.
	step("StaticPodNotStarted, twice", func(evs []v1.Event) bool { return mostOf(evs, pod, types.ReasonNotStarted) >= 2 })
	close(release)
	step("StaticPodStarted once the restart runs", func(evs []v1.Event) bool { return mostOf(evs, pod, types.ReasonStarted) >= 1 })
	for i := 1; i <= 2; i++ {
		waitRunning(ctx, t, k, pod)
		exitRunning(t, k, pod, 137, "OOMKilled")
		step(fmt.Sprintf("StaticPodRestarting #%d", i), func(evs []v1.Event) bool { return mostOf(evs, pod, types.ReasonRestarting) >= i })
	}

	// The API copies follow: wait until describe shows each Event of
	// podwatch's once, the two warnings with their counts.
	var describe string
	apiCtx, apiCancel := context.WithTimeout(ctx, time.Minute)
	defer apiCancel()
	err = wait.PollUntilContextCancel(apiCtx, time.Second, true, func(ctx context.Context) (bool, error) {
		if _, err := admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		if describe, err = s.Kubectl(ctx, apiserver.AdminToken, "describe", "pod", "-n", ns, pod); err != nil {
			return false, err
		}
		n := map[string]int{}
		counted := map[string]bool{}
		for _, row := range podwatchRows(eventRows(describe)) {
			n[row[1]]++
			counted[row[1]] = strings.Contains(row[2], "(x2 over ")
		}
		return n[types.ReasonAdded] == 1 && n[types.ReasonStarted] == 1 &&
			n[types.ReasonNotStarted] == 1 && counted[types.ReasonNotStarted] &&
			n[types.ReasonRestarting] == 1 && counted[types.ReasonRestarting], nil
	})
	if err != nil {
		t.Fatalf("podwatch's Events in kubectl describe: %v\nkubectl describe said:\n%s\npodwatch said:\n%s", err, describe, pw.dump(t))
	}
	t.Logf("kubectl describe pod:\n%s", describe)
	checkTranscript(t, "describe-warnings.golden", withoutIDs(eventRows(describe)))
}

// failFirstStart drives the fake CRI for the static pod fullName: its
// container's first start exits at once with code 1, and every creation
// of a container after the first waits for release.
func failFirstStart(k *kubelet.Kubelet, fullName string, release <-chan struct{}) kubelet.Interceptor {
	rs := k.Runtime()
	var (
		mu               sync.Mutex
		created, started int
	)
	return func(ctx context.Context, method string, req any, call func() (any, error)) (any, error) {
		switch r := req.(type) {
		case *runtimeapi.CreateContainerRequest:
			if r.GetConfig().GetLabels()["io.kubernetes.pod.name"] != fullName {
				break
			}
			mu.Lock()
			created++
			later := created > 1
			mu.Unlock()
			if later {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		case *runtimeapi.StartContainerRequest:
			if podOfContainer(k, r.GetContainerId()) != fullName {
				break
			}
			mu.Lock()
			started++
			first := started == 1
			mu.Unlock()
			if first {
				// Started and exited under one lock, so that no poll
				// ever sees it running.
				rs.Lock()
				defer rs.Unlock()
				c := rs.Containers[r.GetContainerId()]
				now := time.Now().UnixNano()
				c.State, c.StartedAt, c.FinishedAt, c.ExitCode, c.Reason = runtimeapi.ContainerState_CONTAINER_EXITED, now, now, 1, "Error"
				return &runtimeapi.StartContainerResponse{}, nil
			}
		}
		return call()
	}
}

// mostOf is the highest count of an Event of reason about pod: how often
// one message was said.
func mostOf(evs []v1.Event, pod, reason string) int {
	most := 0
	for _, ev := range evs {
		if ev.Reason == reason && ev.InvolvedObject.Name == pod {
			most = max(most, int(ev.Count))
		}
	}
	return most
}

// waitRunning returns once pod fullName has a running container in the
// fake runtime.
func waitRunning(ctx context.Context, t *testing.T, k *kubelet.Kubelet, fullName string) {
	t.Helper()
	rs := k.Runtime()
	for {
		rs.Lock()
		running := false
		for _, c := range rs.Containers {
			running = running || (c.Labels["io.kubernetes.pod.name"] == fullName && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING)
		}
		rs.Unlock()
		if running {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no running container of %s", fullName)
		case <-time.After(20 * time.Millisecond): // polling a condition, not waiting for time
		}
	}
}

// sandboxUIDText is a static pod's UID where a message names it bare, as
// StaticPodRestarting's "(UID ...)" does.
var sandboxUIDText = regexp.MustCompile(`\bUID [0-9a-f]{32}\b`)

// withoutIDs is rows with the pod UIDs that eventRows leaves replaced by
// "UID <uid>".
func withoutIDs(rows [][]string) [][]string {
	for _, r := range rows {
		for i := range r {
			r[i] = sandboxUIDText.ReplaceAllString(r[i], "UID <uid>")
		}
	}
	return rows
}

// checkTranscript holds podwatch's rows in rows to testdata/golden and the
// docs/events.md's transcript of it to the golden file; -update rewrites both
// from rows.
func checkTranscript(t *testing.T, golden string, rows [][]string) {
	t.Helper()
	file := filepath.Join("testdata", golden)
	readme := transcriptDoc
	if *update {
		if err := os.WriteFile(file, []byte(table(rows)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := replaceBlockOf(readme, golden, table(rows)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := withoutIDs(eventRows("\nEvents:\n" + string(want)))
	if got, want := sortedRows(podwatchRows(rows)), sortedRows(podwatchRows(wantRows)); got != want {
		t.Errorf("podwatch's rows in kubectl describe differ from %s (-update rewrites it and docs/events.md):\ngot:\n%s\nwant:\n%s", file, got, want)
	}
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if block, _ := readmeBlockOf(string(text), golden); block != table(wantRows) {
		t.Errorf("docs/events.md's kubectl describe transcript of %s is not that file (-update rewrites both)", file)
	}
}

// TestDocsTranscriptsAreTheGoldens holds each transcript in docs/events.md
// to its golden file without running anything, so that a hand edit of
// either fails in -short runs too; and each block is found after its own
// begin line, though all end with the same line.
func TestDocsTranscriptsAreTheGoldens(t *testing.T) {
	text, err := os.ReadFile(transcriptDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, golden := range []string{"describe.golden", "describe-warnings.golden"} {
		want, err := os.ReadFile(filepath.Join("testdata", golden))
		if err != nil {
			t.Fatal(err)
		}
		block, at := readmeBlockOf(string(text), golden)
		if at == [2]int{} {
			t.Errorf("docs/events.md has no transcript of %s", golden)
			continue
		}
		if block != table(withoutIDs(eventRows("\nEvents:\n"+string(want)))) {
			t.Errorf("docs/events.md's transcript of %s is not that file:\n%s", golden, block)
		}
	}
}
