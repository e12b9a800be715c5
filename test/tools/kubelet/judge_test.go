//go:build linux

package kubelet_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/apiserver"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// hostnameOverride is mixed case so the suite also checks that podwatch is
// given the node name the kubelet derives (lowercased) and suffixes with it.
const hostnameOverride = "Judge-Node"

// settleTimeout bounds one settle step. A restart takes the kubelet 11-14 s:
// it starts the new UID only after the old one is gone.
const settleTimeout = 90 * time.Second

// TestKubeletJudgesPodwatch runs every scenario in testdata/scenarios
// against one real kubelet and one podwatch on the same folder, and holds
// podwatch's Events to what the kubelet did with each pod: ADD is a sandbox
// started for a pod that had none, UPDATE one started for a new UID after
// the old UID's was stopped, REMOVE the last UID's sandbox stopped with no
// successor. Then it checks the kubelet left the host as it was.
func TestKubeletJudgesPodwatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real kubelet for about a minute")
	}
	dir := t.TempDir()
	if err := kubelet.Isolation(filepath.Join(dir, "probe")); err != nil {
		t.Skip(err)
	}
	scenarios := loadScenarios(t)
	bin, err := apiserver.BuildKubelet()
	if err != nil {
		t.Fatal(err)
	}
	before, err := kubelet.ReadHost()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k, err := kubelet.Start(ctx, kubelet.Config{Binary: bin, Dir: filepath.Join(dir, "k"), NodeName: hostnameOverride})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := k.Stop(); err != nil {
				t.Errorf("kubelet stop: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubelet log, last lines:\n%s", tail(k.Log, 60))
		}
	})
	node := strings.ToLower(hostnameOverride)
	pw := startPodwatch(t, k.Manifests, node)

	var (
		mu      sync.Mutex
		results []result
	)
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				r := run(ctx, t, sc, k, pw, node)
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			})
		}
	})
	slices.SortFunc(results, func(a, b result) int { return strings.Compare(a.name, b.name) })
	var tab bytes.Buffer
	w := tabwriter.NewWriter(&tab, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tthe kubelet did\tpodwatch said\tagree")
	for _, r := range results {
		fmt.Fprintf(w, "%s\t%s\t%s\t%v\n", r.name, r.kubelet, r.podwatch, r.agree)
	}
	w.Flush()
	t.Logf("\n%s", tab.String())

	stop()
	t.Run("host unchanged", func(t *testing.T) {
		after, err := kubelet.ReadHost()
		if err != nil {
			t.Fatal(err)
		}
		if d := before.Diff(after); d != "" {
			t.Errorf("the kubelet changed the host:\n%s", d)
		}
	})
}

type result struct {
	name              string
	kubelet, podwatch string
	agree             bool
}

// run applies a scenario's steps and compares, pod by pod, the kubelet's
// operations with podwatch's Events.
func run(ctx context.Context, t *testing.T, sc scenario, k *kubelet.Kubelet, pw *podwatch, node string) result {
	full := func(p string) string { return p + "-" + node }
	// At each settle, the kubelet's operations since the last one are read
	// from the UIDs it started and stopped.
	running := map[string]string{} // pod -> UID running at the last settle
	seen := map[string]int{}       // pod -> UIDs started by the last settle
	did := map[string][]string{}
	var detail []string
	settles := 0
	for _, s := range sc.steps {
		if s.verb != "settle" {
			if err := s.apply(k.Manifests, sc); err != nil {
				t.Fatalf("line %d: %v", s.line, err)
			}
			continue
		}
		settles++
		start := time.Now()
		snap := settle(ctx, t, sc, settles, k, pw, node)
		for _, p := range sc.pods {
			uids := snap.UIDs(full(p))
			cur := running[p]
			for _, u := range uids[seen[p]:] {
				op := "ADD"
				if cur != "" {
					op = "UPDATE"
				}
				did[p] = append(did[p], op)
				detail = append(detail, fmt.Sprintf("%s %s %s", p, op, u.Pod.UID))
				cur = u.Pod.UID
			}
			seen[p] = len(uids)
			now := ""
			if n := len(uids); n > 0 && uids[n-1].Stopped.IsZero() {
				now = uids[n-1].Pod.UID
			}
			if now == "" && cur != "" {
				did[p] = append(did[p], "REMOVE")
				detail = append(detail, fmt.Sprintf("%s REMOVE %s", p, cur))
			}
			running[p] = now
		}
		t.Logf("line %d: settled in %v", s.line, time.Since(start).Round(100*time.Millisecond))
	}
	evs := pw.events(t)
	said := map[string][]string{}
	for _, p := range sc.pods {
		said[p] = podwatchOps(evs, full(p))
	}
	r := result{name: sc.name, kubelet: format(sc.pods, did), podwatch: format(sc.pods, said), agree: true}
	for _, p := range sc.pods {
		if !slices.Equal(did[p], said[p]) {
			r.agree = false
			t.Errorf("%s: the kubelet did %v, podwatch said %v", p, did[p], said[p])
		}
	}
	t.Logf("the kubelet: %s", strings.Join(detail, "; "))
	if !r.agree {
		t.Logf("podwatch's Events:\n%s", pw.dump(t))
	}
	return r
}

// settle waits until both have acted on everything done so far, with a
// barrier pod: its manifest is written, and once both have started it,
// removed again. Each reads the folder's changes in order, so by the time
// both have started the barrier they have read the scenario's; podwatch
// holds bad news (a REMOVE among them) back for its settle delay, so only
// once it reports the barrier's REMOVE has it reported the scenario's. The
// kubelet must also be done with the scenario's pods: a sandbox started
// for every UID its sync loop added and stopped for every UID it removed
// (a restart's new UID starts seconds after the REMOVE and ADD lines).
func settle(ctx context.Context, t *testing.T, sc scenario, n int, k *kubelet.Kubelet, pw *podwatch, node string) kubelet.Snapshot {
	t.Helper()
	name := fmt.Sprintf("barrier-%s-%d", sc.name, n)
	file := filepath.Join(k.Manifests, name+".yaml")
	manifest := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: judge-barrier}\nspec:\n  containers: [{name: main, image: registry.example/barrier:1}]\n", name)
	barrier := "judge-barrier/" + name + "-" + node
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	var snap kubelet.Snapshot
	for _, phase := range []struct {
		do      func() error
		kubelet func([]kubelet.PodState) bool
		says    string
	}{
		{func() error { return os.WriteFile(file, []byte(manifest), 0o644) }, func(b []kubelet.PodState) bool { return len(b) == 1 }, "ADD"},
		{func() error { return os.Remove(file) }, func(b []kubelet.PodState) bool { return len(b) == 1 && !b[0].Stopped.IsZero() }, "REMOVE"},
	} {
		if err := phase.do(); err != nil {
			t.Fatal(err)
		}
		var err error
		snap, err = k.History().Wait(ctx, func(s kubelet.Snapshot) bool {
			if !phase.kubelet(s.UIDs(barrier)) {
				return false
			}
			for _, p := range sc.pods {
				if !done(s, p+"-"+node) {
					return false
				}
			}
			return true
		})
		if err != nil {
			t.Logf("barrier: sync loop %v, sandboxes %+v", snap.LoopOps(barrier), snap.UIDs(barrier))
			for _, p := range sc.pods {
				t.Logf("%s: sync loop %v, sandboxes %+v", p, snap.LoopOps(p+"-"+node), snap.UIDs(p+"-"+node))
			}
			t.Fatalf("settle %d: %v", n, err)
		}
		if err := pw.wait(ctx, func(evs []v1.Event) bool { return slices.Contains(podwatchOps(evs, barrier), phase.says) }); err != nil {
			t.Fatalf("settle %d: podwatch did not report %s of the barrier pod %s: %v\n%s", n, phase.says, barrier, err, pw.dump(t))
		}
	}
	return snap
}

// done reports whether the kubelet has carried out, for the pod fullName,
// every ADD and REMOVE its sync loop logged: one UID started per ADD, and
// only the last UID still running, unless the last operation removed it.
func done(s kubelet.Snapshot, fullName string) bool {
	ops, uids := s.LoopOps(fullName), s.UIDs(fullName)
	adds := 0
	for _, op := range ops {
		if op == "ADD" {
			adds++
		}
	}
	if adds != len(uids) {
		return false
	}
	for i, u := range uids {
		shouldRun := i == len(uids)-1 && ops[len(ops)-1] != "REMOVE"
		if shouldRun != u.Stopped.IsZero() {
			return false
		}
	}
	return true
}

func format(pods []string, ops map[string][]string) string {
	var parts []string
	for _, p := range pods {
		s := strings.Join(ops[p], ", ")
		if s == "" {
			s = "nothing"
		}
		if len(pods) > 1 {
			s = p + ": " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// podwatchOps is what podwatch's Events say the kubelet did with the pod
// fullName, in order. An Event written again with a higher count stands
// for that many more occurrences.
func podwatchOps(evs []v1.Event, fullName string) []string {
	op := map[string]string{types.ReasonAdded: "ADD", types.ReasonUpdated: "UPDATE", types.ReasonRemoved: "REMOVE"}
	counts := map[string]int32{}
	var out []string
	for _, ev := range evs {
		o := ev.InvolvedObject
		if o.Kind != types.KindPod || o.Namespace+"/"+o.Name != fullName || op[ev.Reason] == "" {
			continue
		}
		for range ev.Count - counts[ev.Name] {
			out = append(out, op[ev.Reason])
		}
		counts[ev.Name] = max(counts[ev.Name], ev.Count)
	}
	return out
}

// podwatch is the agent run in this process, its stdout kept.
type podwatch struct {
	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (p *podwatch) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.changed)
	p.changed = make(chan struct{})
	return p.out.Write(b)
}

func startPodwatch(t *testing.T, path, node string) *podwatch {
	t.Helper()
	opts := agent.DefaultOptions()
	opts.Source.Path = path
	opts.Source.FileCheckFrequency = 2 * time.Second // the kubelet's, in kubelet.Start
	opts.Source.SettleDelay = 100 * time.Millisecond
	opts.NodeName = node
	opts.Output = "json"
	opts.StateDir = t.TempDir()
	opts.Metrics.BindAddress = "0"
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	p := &podwatch{changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- agent.New(opts, agent.Env{Stdout: p, Log: slog.New(slog.DiscardHandler), Version: "kubelet-judge"}).Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("podwatch: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("podwatch did not stop within 15s of cancel")
		}
	})
	return p
}

func (p *podwatch) events(t *testing.T) []v1.Event {
	t.Helper()
	evs, err := p.parse()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func (p *podwatch) parse() ([]v1.Event, error) {
	p.mu.Lock()
	data := bytes.Clone(p.out.Bytes())
	p.mu.Unlock()
	var out []v1.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev v1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("podwatch printed a line that is not a v1 Event: %v: %s", err, sc.Text())
		}
		out = append(out, ev)
	}
	return out, nil
}

// wait returns once cond holds for the Events printed so far.
func (p *podwatch) wait(ctx context.Context, cond func([]v1.Event) bool) error {
	for {
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		evs, err := p.parse()
		if err != nil {
			return err
		}
		if cond(evs) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *podwatch) dump(t *testing.T) string {
	var b strings.Builder
	for _, ev := range p.events(t) {
		fmt.Fprintf(&b, "  %s %s/%s x%d: %s\n", ev.Reason, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, ev.Count, ev.Message)
	}
	return b.String()
}

// tail is the last n lines of a file, for a failure message.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
