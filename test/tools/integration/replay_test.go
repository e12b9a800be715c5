package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/store"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// replayProc is the built binary writing to the API server.
type replayProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{} // closed when Wait returned, err set
	err    error
}

// wait returns how the process exited, once it has.
func (p *replayProc) wait() error {
	<-p.done
	return p.err
}

func startReplayProc(t *testing.T, bin, kubeconfig, dir, state string) *replayProc {
	t.Helper()
	p := &replayProc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, "--path", dir, "--state-dir", state, "--node-name", node, "--kubeconfig", kubeconfig,
		"-o", "json", "--log-format", "json", "--metrics-bind-address", "0", "--settle-delay", "100ms",
		"--file-check-frequency", "500ms", "--shutdown-timeout", "5s")
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill() // an error when it has exited already
		_ = p.wait()
		if t.Failed() {
			t.Logf("agent stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// apiUpdates lists the StaticPodUpdated Events in the API whose message has
// substr.
func apiUpdates(ctx context.Context, c corev1client.CoreV1Interface, substr string) ([]v1.Event, error) {
	l, err := c.Events("").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"reason": "StaticPodUpdated"}.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	var out []v1.Event
	for _, ev := range l.Items {
		if strings.Contains(ev.Message, substr) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// The API's side of the replay promise (test/e2e holds stdout and the
// store to theirs): SIGKILL right after the UPDATE's Event reached the API,
// inside the one-second persist window, then a restart on the same state
// dir; the API's count must stay exact.
func TestReplayAfterSIGKILLToTheAPI(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	work := t.TempDir()
	bin := filepath.Join(work, "podwatch")
	build := exec.Command("go", "build", "-o", bin, "./cmd/podwatch")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kubeconfig, err := s.WriteKubeconfig(apiserver.PodwatchToken)
	if err != nil {
		t.Fatal(err)
	}
	dir, state := filepath.Join(work, "manifests"), filepath.Join(work, "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, image string) {
		t.Helper()
		tmp := filepath.Join(dir, "."+name+".tmp")
		content := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: kube-system\nspec:\n  containers:\n  - name: web\n    image: " + image + "\n"
		if image == "" {
			content = "kind: Pod\n"
		}
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	shardsSay := func(image string) bool {
		names, _ := filepath.Glob(filepath.Join(state, "pods-*.json"))
		for _, n := range names {
			if data, err := os.ReadFile(n); err == nil && bytes.Contains(data, []byte(`"image":"`+image+`"`)) {
				return true
			}
		}
		return false
	}
	write("web.yaml", "nginx:1.28")
	// The mirror pods the kubelet would make: the API sink holds a pod
	// change's Event until the one for the change is there.
	const mirror = "web-" + node
	createMirrorPod(t, c, "kube-system", mirror, "hash1")

	a := startReplayProc(t, bin, kubeconfig, dir, state)
	eventually(t, "the ADD saved in the shards", func(context.Context) (bool, error) { return shardsSay("nginx:1.28"), nil })
	eventually(t, "the ADD in the API under the mirror pod", func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, "kube-system", mirror, "hash1")
		// Written a moment before the first start: an ADD once it
		// settles, or found when the start took longer than that.
		return len(byReason(evs, types.ReasonAdded))+len(byReason(evs, types.ReasonFound)) == 1, err
	})
	// Replaced before the edit, so that the UPDATE goes out at once, inside
	// the persist window, and not a recheck later.
	if err := c.Pods("kube-system").Delete(context.Background(), mirror, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	createMirrorPod(t, c, "kube-system", mirror, "hash2")

	const change = "image 1.28 → 1.29"
	write("web.yaml", "nginx:1.29")
	var before v1.Event
	eventually(t, "the UPDATE in the API", func(ctx context.Context) (bool, error) {
		evs, err := apiUpdates(ctx, c, change)
		if len(evs) == 1 {
			before = evs[0]
		}
		return len(evs) == 1, err
	})
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	if err := a.wait(); !errors.As(err, &exitErr) {
		t.Fatalf("exit after SIGKILL: %v", err)
	}
	if shardsSay("nginx:1.29") {
		t.Fatal("the shards already hold the UPDATE at the kill: it came after the persist window, not inside it")
	}
	t.Logf("killed with the UPDATE in the API at count %d; the shards still say nginx:1.28", before.Count)

	b := startReplayProc(t, bin, kubeconfig, dir, state)
	write("zz-marker.yaml", "")
	// The store is read at once (the API is written at most every
	// --event-write-interval per Event); SIGTERM then flushes the API.
	eventually(t, "the marker's InvalidManifest twice in the store (a relist after the restart's first)", func(context.Context) (bool, error) {
		evs, _ := store.ReadEvents(state)
		for _, ev := range byReason(evs, "InvalidManifest") {
			if strings.Contains(ev.Message, "zz-marker.yaml") && ev.Count >= 2 {
				return true, nil
			}
		}
		return false, nil
	})
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.done:
		if b.err != nil {
			t.Fatalf("exit after SIGTERM: %v", b.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15s of SIGTERM")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	after, err := apiUpdates(ctx, c, change)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 {
		t.Fatalf("%d UPDATE Events in the API after the restart, want the one continued", len(after))
	}
	t.Logf("after the restart: API count %d -> %d (same Event %v)", before.Count, after[0].Count, after[0].Name == before.Name)
	// The README's promise for the API: exact. The restart recognises the
	// replay from the store's copy of the Event and does not count it again.
	if after[0].Name != before.Name || after[0].Count != before.Count {
		t.Errorf("API Event %s count %d after the restart; want %s at %d (the replay not counted)",
			after[0].Name, after[0].Count, before.Name, before.Count)
	}
	if got, want := after[0].Annotations[events.AnnotationChange], before.Annotations[events.AnnotationChange]; got == "" || got != want {
		t.Errorf("API Event's %s %q after the restart, want %q as before", events.AnnotationChange, got, want)
	}
}
