package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/agent"
)

// lockedBuffer is stdout shared between the agent and the test.
type lockedBuffer struct{ testutil.LockedBuffer }

func (b *lockedBuffer) events(t *testing.T) []v1.Event {
	t.Helper()
	var out []v1.Event
	sc := bufio.NewScanner(bytes.NewReader(b.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev v1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not a v1 Event: %v: %s", err, sc.Text())
		}
		out = append(out, ev)
	}
	return out
}

// agent is a running run() on a temp dir.
type runningAgent struct {
	t    *testing.T
	dir  string
	out  *lockedBuffer
	done chan error
	stop context.CancelFunc
	// firstList is closed once the agent logs its first list.
	firstList <-chan struct{}
}

const testNode = "node-1"

func startAgent(t *testing.T, path string, modify ...func(*agent.Options)) *runningAgent {
	t.Helper()
	return startAgentLogging(t, path, slog.New(slog.NewTextHandler(io.Discard, nil)), modify...)
}

// startAgentLogging is startAgent with the agent's logs going to log.
func startAgentLogging(t *testing.T, path string, log *slog.Logger, modify ...func(*agent.Options)) *runningAgent {
	t.Helper()
	opts := agent.DefaultOptions()
	opts.Source.Path = path
	opts.Source.FileCheckFrequency = 500 * time.Millisecond
	opts.Source.SettleDelay = 100 * time.Millisecond
	opts.NodeName = testNode
	opts.Output = "json"
	opts.StateDir = t.TempDir()
	opts.Metrics.BindAddress = "127.0.0.1:0"
	for _, m := range modify {
		m(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := newFirstListHandler(log.Handler())
	log = slog.New(h)
	a := &runningAgent{t: t, dir: path, out: &lockedBuffer{}, done: make(chan error, 1), stop: cancel, firstList: h.seen}
	go func() {
		a.done <- agent.New(opts, agent.Env{Clock: clock.RealClock{}, Stdout: a.out, Log: log, Version: "test"}).Run(ctx)
	}()
	t.Cleanup(func() { a.shutdown() })
	return a
}

func (a *runningAgent) shutdown() {
	a.t.Helper()
	if a.stop == nil {
		return
	}
	a.stop()
	a.stop = nil
	select {
	case err := <-a.done:
		if err != nil {
			a.t.Errorf("run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		a.t.Error("run did not return within 5s of cancel")
	}
}

// waitEvent polls stdout until an Event with reason and a message containing
// substr appears (beyond the first skip such events), or fails at the deadline.
func (a *runningAgent) waitEvent(reason, substr string) v1.Event {
	a.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, ev := range a.out.events(a.t) {
			if ev.Reason == reason && strings.Contains(ev.Message, substr) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("no %s event containing %q within 5s; got:\n%s", reason, substr, a.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (a *runningAgent) count(reason string) int {
	n := 0
	for _, ev := range a.out.events(a.t) {
		if ev.Reason == reason {
			n++
		}
	}
	return n
}

func (a *runningAgent) dump() string {
	var sb strings.Builder
	for _, ev := range a.out.events(a.t) {
		fmt.Fprintf(&sb, "  %s %s x%d: %s\n", ev.Type, ev.Reason, ev.Count, ev.Message)
	}
	return sb.String()
}

func manifestYAML(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: kube-system\nspec:\n  containers:\n  - name: %s\n    image: %s\n", name, name, image)
}

// writeByRename writes content the way tools install a file: write a
// temporary dotfile, then rename it into place.
func writeByRename(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func TestRunLifecycle(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir)
	a.waitFirstList()
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", "registry.k8s.io/etcd:3.6.15-0"))
	ev := a.waitEvent("StaticPodAdded", "etcd.yaml")
	if ev.InvolvedObject.Name != "etcd-node-1" || ev.InvolvedObject.Namespace != "kube-system" || ev.Namespace != "kube-system" ||
		ev.Source.Host != testNode || ev.Count != 1 || !strings.HasPrefix(ev.Name, "etcd-node-1.") {
		t.Fatalf("add event = %+v", ev)
	}

	// Rewrite in place: an UPDATE naming the image.
	if err := os.WriteFile(filepath.Join(dir, "etcd.yaml"), []byte(manifestYAML("etcd", "registry.k8s.io/etcd:3.6.16-0")), 0o600); err != nil {
		t.Fatal(err)
	}
	a.waitEvent("StaticPodUpdated", "etcd.yaml: image 3.6.15-0 → 3.6.16-0: the kubelet restarts the pod")

	// Dotfiles are never manifests.
	writeByRename(t, dir, ".hidden.yaml", manifestYAML("hidden", "busybox"))

	// Turns invalid: InvalidManifest and a Warning REMOVE that says why.
	writeByRename(t, dir, "etcd.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\nspec:\n  containers:\n  - name: etcd\n")
	a.waitEvent("InvalidManifest", "etcd.yaml is invalid")
	rm := a.waitEvent("StaticPodRemoved", "etcd.yaml is invalid")
	if rm.Type != "Warning" {
		t.Fatalf("remove of an invalid manifest is %s, want Warning", rm.Type)
	}

	// And back.
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", "registry.k8s.io/etcd:3.6.16-0"))
	deadline := time.Now().Add(5 * time.Second)
	for a.count("StaticPodAdded") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second ADD after the fix:\n%s", a.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Removal.
	if err := os.Remove(filepath.Join(dir, "etcd.yaml")); err != nil {
		t.Fatal(err)
	}
	if ev := a.waitEvent("StaticPodRemoved", "etcd.yaml was removed"); ev.Type != "Normal" {
		t.Fatalf("plain removal is %s, want Normal", ev.Type)
	}
	for _, ev := range a.out.events(t) {
		if strings.Contains(ev.Message, "hidden") {
			t.Fatalf("a dotfile produced an event: %s", ev.Message)
		}
	}
}

func TestRunInvalidCountGrowsPerRelist(t *testing.T) {
	dir := t.TempDir()
	writeByRename(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n")
	a := startAgent(t, dir)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var last *v1.Event
		for _, ev := range a.out.events(t) {
			if ev.Reason == "InvalidManifest" {
				last = &ev
			}
		}
		if last != nil && last.Count >= 3 {
			if last.InvolvedObject.Kind != "Node" || last.InvolvedObject.UID != testNode || last.Namespace != "default" {
				t.Fatalf("invalid manifest event object = %+v ns %q", last.InvolvedObject, last.Namespace)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InvalidManifest count did not reach 3 over relists:\n%s", a.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
	names := map[string]bool{}
	for _, ev := range a.out.events(t) {
		if ev.Reason == "InvalidManifest" {
			names[ev.Name] = true
		}
	}
	if len(names) != 1 {
		t.Fatalf("one invalid file gave %d Event names, want 1", len(names))
	}
}

func TestRunDuplicateAndFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, dir)
	a.waitFirstList() // through the FIFO
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "web.yaml")
	writeByRename(t, dir, "web.yaml.bak", manifestYAML("web", "nginx:1.28"))
	a.waitEvent("StaticPodUpdated", "now from web.yaml.bak")
	d := a.waitEvent("DuplicatePod", "web.yaml.bak shadows web.yaml: the kubelet runs the pod from it")
	if d.InvolvedObject.Kind != "Pod" || d.Type != "Warning" {
		t.Fatalf("duplicate event = %+v", d)
	}
}

func TestRunDirectoryDeletedAndRecreated(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, dir)
	a.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "web.yaml")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	a.waitEvent("ManifestPathMissing", dir)
	a.waitEvent("StaticPodRemoved", "does not exist")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	deadline := time.Now().Add(3 * time.Second)
	for a.count("StaticPodAdded") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("recreated directory not picked up:\n%s", a.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A folder that does not exist yet is tried again every second, as the
// kubelet tries its own watch: WatchDegraded says so, not "the next
// relist", and a folder created there is taken in within about a second
// though the relist is 20 s away.
func TestRunMissingDirectoryWatchedOnceCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	a := startAgent(t, dir, func(o *agent.Options) { o.Source.FileCheckFrequency = 20 * time.Second })
	wd := a.waitEvent("WatchDegraded", dir)
	if strings.Contains(wd.Message, "relist") || !strings.Contains(wd.Message, "tries again every 1s") {
		t.Errorf("WatchDegraded for a missing folder = %q; want the 1s retry, not the relist", wd.Message)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	deadline := created.Add(5 * time.Second)
	for a.count("StaticPodAdded") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("created folder not taken in within 5s:\n%s", a.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// About a second, with room for a loaded machine; the relist is 20s off.
	if took := time.Since(created); took > 3*time.Second {
		t.Errorf("created folder taken in after %v; want about a second", took)
	} else {
		t.Logf("created folder taken in after %v", took)
	}
}

func TestRunSymlinkedDirectorySwap(t *testing.T) {
	root := t.TempDir()
	v1dir, v2dir := filepath.Join(root, "v1"), filepath.Join(root, "v2")
	for _, d := range []string{v1dir, v2dir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeByRename(t, v2dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	link := filepath.Join(root, "manifests")
	if err := os.Symlink("v1", link); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, link)
	a.waitFirstList()
	writeByRename(t, v1dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	a.waitEvent("StaticPodAdded", "nginx:1.28")
	tmp := filepath.Join(root, ".manifests.tmp")
	if err := os.Symlink("v2", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	a.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
}

func TestRunSingleFile(t *testing.T) {
	dir := t.TempDir()
	// The single-file path is there at start: written an hour before, so
	// the first list finds it however fast the agent comes up.
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "web.yaml"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, filepath.Join(dir, "web.yaml"))
	a.waitEvent("StaticPodFound", "web.yaml")
	writeByRename(t, dir, "web.yaml", "kind: Pod\n")
	a.waitEvent("InvalidManifest", "web.yaml is invalid")
	if n := a.count("StaticPodRemoved"); n != 0 {
		t.Fatalf("single-file path: an invalid file removed the pod (%d removes); the kubelet keeps the last good one", n)
	}
}
