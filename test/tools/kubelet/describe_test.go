//go:build linux

package kubelet_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/apiserver"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

var update = flag.Bool("update", false, "rewrite the testdata/describe*.golden files and docs/events.md's transcripts from this run")

// describeNode is the node of the describe test; its own, so the mirror
// pods are the only ones on it.
const describeNode = "node-1"

// TestDescribeShowsTheKubeletsWork runs the kubelet against a real API
// server, so it registers its Node and creates a mirror pod for each static
// pod, and podwatch beside it with the RBAC of deploy/kubernetes and the
// fake CRI. A static pod is added and then edited; what `kubectl describe
// pod` shows of it afterwards is the transcript in docs/events.md, kept in
// testdata/describe.golden (-update rewrites both from a run).
func TestDescribeShowsTheKubeletsWork(t *testing.T) {
	if testing.Short() {
		kubelet.Skip(t, "runs the real kubelet and kube-apiserver for about a minute")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, podwatchConfig, kubeletConfig := cluster(ctx, t)
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: describeNode, Kubeconfig: kubeletConfig})
	pw := startPodwatch(t, k.Manifests, describeNode, k.CRISocket, func(o *agent.Options) {
		o.Kube.Kubeconfig = podwatchConfig
	})
	admin, err := kubernetes.NewForConfig(s.Config(apiserver.AdminToken))
	if err != nil {
		t.Fatal(err)
	}

	const ns, pod = "kube-system", "web-" + describeNode
	started := func(n int) func([]v1.Event) bool {
		return func(evs []v1.Event) bool {
			seen := map[string]int32{} // Event name -> count
			for _, ev := range evs {
				if ev.Reason == types.ReasonStarted && ev.InvolvedObject.Name == pod {
					seen[ev.Name] = ev.Count
				}
			}
			total := 0
			for _, c := range seen {
				total += int(c)
			}
			return total >= n
		}
	}
	for i, image := range []string{"registry.example/web:1", "registry.example/web:2"} {
		// Renamed in whole: a file seen still open for writing makes
		// podwatch say the kubelet may have read it mid-write, true under
		// a load that holds the writer between its write and its close,
		// but not the transcript's.
		writeManifest(t, k, "web", webManifest(image))
		if err := pw.wait(ctx, started(i+1)); err != nil {
			t.Fatalf("podwatch's StaticPodStarted #%d: %v\npodwatch said:\n%s", i+1, err, pw.dump(t))
		}
	}
	// The kubelet recreates the mirror pod for the edit; describe selects
	// Events by its config hash, so podwatch's show once they carry it.
	var describe string
	apiCtx, apiCancel := context.WithTimeout(ctx, time.Minute)
	defer apiCancel()
	err = wait.PollUntilContextCancel(apiCtx, time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := admin.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil || !strings.HasSuffix(p.Spec.Containers[0].Image, ":2") {
			return false, nil
		}
		if _, ok := p.Annotations["kubernetes.io/config.mirror"]; !ok {
			return false, fmt.Errorf("the kubelet's mirror pod has no config.mirror annotation: %v", p.Annotations)
		}
		if describe, err = s.Kubectl(ctx, apiserver.AdminToken, "describe", "pod", "-n", ns, pod); err != nil {
			return false, err
		}
		n := map[string]int{}
		for _, row := range podwatchRows(eventRows(describe)) {
			n[row[1]]++
		}
		// The add and its start are the old UID's, whose mirror pod is gone.
		return n[types.ReasonUpdated] == 1 && n[types.ReasonStarted] == 1, nil
	})
	if err != nil {
		t.Fatalf("podwatch's Events in kubectl describe: %v\nkubectl describe said:\n%s\npodwatch said:\n%s", err, describe, pw.dump(t))
	}
	// The kubelet registers its Node, and with the fake CRI's runtime
	// status it reports it Ready: the mirror pods are a working node's.
	waitNodeReady(apiCtx, t, admin, describeNode)
	t.Logf("kubectl describe pod:\n%s", describe)
	rows := eventRows(describe)
	golden := filepath.Join("testdata", "describe.golden")
	readme := transcriptDoc
	if *update {
		if err := os.WriteFile(golden, []byte(table(rows)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := replaceBlock(readme, table(rows)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := podwatchRows(eventRows("\nEvents:\n" + string(want)))
	if got, want := sortedRows(lateHedgeOff(t, podwatchRows(rows), wantRows, pw.events(t), pod)), sortedRows(wantRows); got != want {
		t.Errorf("podwatch's rows in kubectl describe differ from %s (-update rewrites it and docs/events.md):\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if block, _ := readmeBlock(string(text)); block != table(eventRows("\nEvents:\n"+string(want))) {
		t.Errorf("docs/events.md's kubectl describe transcript is not %s (-update rewrites both)", golden)
	}
}

// cluster starts a kube-apiserver for t, applies deploy/kubernetes and
// creates the namespaces given, and returns it with a kubeconfig for
// podwatch (its ServiceAccount's token, so the deploy's RBAC is what it
// may do) and one for the kubelet.
func cluster(ctx context.Context, t *testing.T, namespaces ...string) (s *apiserver.Server, podwatchConfig, kubeletConfig string) {
	t.Helper()
	s = apiserver.Start(t)
	deploy, err := filepath.Abs(filepath.Join("..", "..", "..", "deploy", "kubernetes"))
	if err != nil {
		t.Fatal(err)
	}
	steps := [][]string{{"apply", "-f", deploy}}
	for _, ns := range namespaces {
		steps = append(steps, []string{"create", "namespace", ns})
	}
	for _, args := range steps {
		if out, err := s.Kubectl(ctx, apiserver.AdminToken, args...); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	token, err := s.Kubectl(ctx, apiserver.AdminToken, "create", "token", "podwatch", "-n", "podwatch", "--duration=1h")
	if err != nil {
		t.Fatal(err)
	}
	if podwatchConfig, err = s.WriteKubeconfig(strings.TrimSpace(token)); err != nil {
		t.Fatal(err)
	}
	if kubeletConfig, err = s.WriteKubeconfig(apiserver.AdminToken); err != nil {
		t.Fatal(err)
	}
	return s, podwatchConfig, kubeletConfig
}

// waitNodeReady returns once node has registered and is Ready, within a
// minute, and fails t otherwise, naming its conditions.
func waitNodeReady(ctx context.Context, t *testing.T, c kubernetes.Interface, node string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var last *v1.Node
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = n
		for _, cond := range n.Status.Conditions {
			if cond.Type == v1.NodeReady {
				return cond.Status == v1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		var conds []v1.NodeCondition
		if last != nil {
			conds = last.Status.Conditions
		}
		t.Fatalf("Node %s not Ready: %v; its conditions: %+v", node, err, conds)
	}
}

// webManifest is the static pod of the describe test, running image.
func webManifest(image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kube-system
spec:
  containers:
  - name: web
    image: %s
`, image)
}

// ageOrTime matches what changes from run to run in describe's Events:
// ages ("12s", "2m3s", "(x2 over 14s)") and the times podwatch measured.
var ageOrTime = regexp.MustCompile(`\b\d+(\.\d+)?\s?(ms|s|m|h)\b|\b(\d+m)?\d+s\b`)

// podUID is the static pod's UID in the kubelet's messages: it hashes the
// manifest's path, a temporary folder.
var podUID = regexp.MustCompile(`\([0-9a-f]{32}\)`)

// eventRows are the rows of describe's Events table, header included, each
// column with every age and measured time replaced by "<t>", and pod UIDs
// by "<uid>".
func eventRows(describe string) [][]string {
	_, after, ok := strings.Cut(describe, "\nEvents:\n")
	if !ok {
		return nil
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(after, "\n"), "\n") {
		cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		for i := range cols {
			cols[i] = ageOrTime.ReplaceAllString(cols[i], "<t>")
			cols[i] = podUID.ReplaceAllString(cols[i], "(<uid>)")
		}
		rows = append(rows, cols)
	}
	return rows
}

// podwatchRows are the rows podwatch's Events make: Type, Reason, Age,
// From, Message.
func podwatchRows(rows [][]string) [][]string {
	var out [][]string
	for _, r := range rows {
		if len(r) == 5 && strings.HasPrefix(r[3], "podwatch") {
			out = append(out, r)
		}
	}
	return out
}

// lateHedgeOff is got with the hedge of an unbounded UPDATE taken off its
// message. A kubelet whose relist came late near the edit (a loaded
// machine) may take the edit's events in seconds apart with a relist
// between: podwatch's claim for it then has no bound, and its words say
// so after the transcript's. Only that claim's row, and only words after
// the transcript's whole message, are taken off.
func lateHedgeOff(t *testing.T, got, want [][]string, evs []v1.Event, pod string) [][]string {
	t.Helper()
	unbounded := false
	for _, ev := range evs {
		if c, ok := eventClaim(ev); ok && ev.Reason == types.ReasonUpdated && ev.InvolvedObject.Name == pod && c.Before.Max == nil {
			unbounded = true
		}
	}
	if !unbounded {
		return got
	}
	out := make([][]string, len(got))
	for i, r := range got {
		out[i] = r
		for _, w := range want {
			if r[1] == types.ReasonUpdated && w[1] == r[1] && strings.HasPrefix(r[4], w[4]+"; ") {
				t.Logf("podwatch saw the kubelet's file source late near the edit; its UPDATE says so after the transcript's words: %q", r[4])
				out[i] = slices.Clone(r)
				out[i][4] = w[4]
			}
		}
	}
	return out
}

// sortedRows is rows in byte order, one per line: describe orders Events
// by lastTimestamp, to the second, so two in one second come either way.
func sortedRows(rows [][]string) string {
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		lines = append(lines, strings.Join(r, " | "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// table is rows aligned as describe aligns them.
func table(rows [][]string) string {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, "  "+strings.Join(r, "\t"))
	}
	w.Flush()
	return b.String()
}

// transcriptDoc is the page that shows the kubectl describe transcripts.
var transcriptDoc = filepath.Join("..", "..", "..", "docs", "events.md")

// The transcripts in transcriptDoc sit each between the line readmeBegin gives
// for its golden file and the next readmeEnd, inside a code block.
const readmeEnd = "<!-- end of describe transcript -->\n"

func readmeBegin(golden string) string {
	return "<!-- describe transcript: test/tools/kubelet/testdata/" + golden + " -->\n"
}

// readmeBlock returns the Events rows of docs/events.md's transcript of
// testdata/describe.golden and where they sit in text.
func readmeBlock(text string) (string, [2]int) {
	return readmeBlockOf(text, "describe.golden")
}

// readmeBlockOf returns the Events rows of docs/events.md's transcript of
// testdata/golden and where they sit in text.
func readmeBlockOf(text, golden string) (string, [2]int) {
	begin := readmeBegin(golden)
	i := strings.Index(text, begin)
	if i < 0 {
		return "", [2]int{}
	}
	i += len(begin)
	j := strings.Index(text[i:], readmeEnd)
	if j < 0 {
		return "", [2]int{}
	}
	block := text[i : i+j]
	_, rows, ok := strings.Cut(block, "Events:\n")
	if !ok {
		return "", [2]int{}
	}
	rows = strings.TrimSuffix(rows, "```\n")
	start := i + strings.Index(block, "Events:\n") + len("Events:\n")
	return rows, [2]int{start, start + len(rows)}
}

// replaceBlock writes rows into docs/events.md's transcript of
// testdata/describe.golden.
func replaceBlock(readme, rows string) error {
	return replaceBlockOf(readme, "describe.golden", rows)
}

// replaceBlockOf writes rows into docs/events.md's transcript of
// testdata/golden.
func replaceBlockOf(readme, golden, rows string) error {
	b, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	text := string(b)
	if _, at := readmeBlockOf(text, golden); at != [2]int{} {
		text = text[:at[0]] + rows + text[at[1]:]
		return os.WriteFile(readme, []byte(text), 0o644)
	}
	return fmt.Errorf("%s has no describe transcript between %q and %q", readme, readmeBegin(golden), readmeEnd)
}

// logText is podwatch's log so far.
func (p *podwatch) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}
