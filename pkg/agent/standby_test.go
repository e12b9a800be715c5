package agent

import (
	"bufio"
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
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/published"
)

const twinWait = 15 * time.Second

// twin is an agent run in this process on a shared folder and state dir.
type twin struct {
	t      *testing.T
	out    testutil.LockedBuffer
	logs   testutil.LockedBuffer
	base   string
	client *http.Client
	stop   context.CancelFunc
	done   chan error
}

func startTwin(t *testing.T, dir, state, pod string) *twin {
	t.Helper()
	o := DefaultOptions()
	o.NodeName = "node-1"
	o.PodName = pod
	o.Source.Path = dir
	o.Source.FileCheckFrequency = 500 * time.Millisecond
	o.Source.SettleDelay = 100 * time.Millisecond
	o.StateDir = state
	o.Output = "json"
	o.Metrics.BindAddress = "127.0.0.1:0"
	addrs := make(chan net.Addr, 1)
	o.OnMetricsListen = func(a net.Addr) { addrs <- a }
	ctx, cancel := context.WithCancel(context.Background())
	w := &twin{t: t, stop: cancel, done: make(chan error, 1), client: &http.Client{Timeout: 5 * time.Second}}
	go func() {
		w.done <- New(o, Env{Clock: clock.RealClock{}, Stdout: &w.out, Log: slog.New(slog.NewTextHandler(&w.logs, nil))}).Run(ctx)
	}()
	w.base = "http://" + (<-addrs).String()
	t.Cleanup(w.shutdown)
	return w
}

func (w *twin) shutdown() {
	if w.stop == nil {
		return
	}
	w.stop()
	w.stop = nil
	select {
	case err := <-w.done:
		if err != nil {
			w.t.Errorf("Run returned %v", err)
		}
	case <-time.After(twinWait):
		w.t.Errorf("Run did not return within %v of cancel", twinWait)
	}
	w.client.CloseIdleConnections()
}

func (w *twin) events() []v1.Event {
	var out []v1.Event
	sc := bufio.NewScanner(bytes.NewReader(w.out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev v1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			w.t.Fatalf("stdout line is not a v1 Event: %v: %s", err, sc.Text())
		}
		out = append(out, ev)
	}
	return out
}

func (w *twin) has(reason, substr string) bool {
	for _, ev := range w.events() {
		if ev.Reason == reason && strings.Contains(ev.Message, substr) {
			return true
		}
	}
	return false
}

func (w *twin) readyz() (int, string) { return testutil.HTTPGet(w.t, w.client, w.base+"/readyz") }

func (w *twin) dump() string {
	var sb strings.Builder
	for _, ev := range w.events() {
		fmt.Fprintf(&sb, "  %s %s: %s\n", ev.Type, ev.Reason, ev.Message)
	}
	return sb.String() + "logs:\n" + w.logs.String()
}

func poll(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(twinWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", twinWait, what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func imagePod(image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: kube-system\nspec:\n  containers:\n  - name: web\n    image: " + image + "\n"
}

func writePod(t *testing.T, dir, image string) {
	t.Helper()
	tmp := filepath.Join(dir, ".web.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(imagePod(image)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
}

// publishedImage is the image of the pod in the state dir's published
// state, or "".
func publishedImage(state string) string {
	s, err := published.Load(state, slog.New(slog.DiscardHandler))
	if err != nil {
		return ""
	}
	for _, p := range s.Pods {
		var pod v1.Pod
		if json.Unmarshal(p.JSON, &pod) == nil && len(pod.Spec.Containers) > 0 {
			return pod.Spec.Containers[0].Image
		}
	}
	return ""
}

// A second podwatch on the same folder and state dir stands by: not ready,
// naming the first by its pod and start time, and silent. When the first
// stops it takes over from the state the first published, so it announces
// nothing the first already did, and then what changes.
func TestTwinStandsByAndTakesOver(t *testing.T) {
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	writePod(t, dir, "nginx:1.28")
	first := startTwin(t, dir, state, "podwatch-first")
	poll(t, func() bool { return first.has("StaticPodAdded", "web.yaml") }, first.dump)

	second := startTwin(t, dir, state, "podwatch-second")
	poll(t, func() bool {
		code, body := second.readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "pod podwatch-first") && strings.Contains(body, "started ")
	}, func() string { code, body := second.readyz(); return fmt.Sprintf("/readyz = %d %q", code, body) })

	// A change while both run: the first says it, the second nothing.
	writePod(t, dir, "nginx:1.29")
	poll(t, func() bool { return first.has("StaticPodUpdated", "image 1.28 → 1.29") }, first.dump)
	if code, body := second.readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz of the standby = %d %q, want 503", code, body)
	}
	first.shutdown()
	if img := publishedImage(state); img != "nginx:1.29" {
		t.Fatalf("the first published %q at its stop, want nginx:1.29", img)
	}
	if evs := second.events(); len(evs) != 0 {
		t.Fatalf("the standby printed %d Events:\n%s", len(evs), second.dump())
	}

	poll(t, func() bool { code, _ := second.readyz(); return code == http.StatusOK },
		func() string {
			code, body := second.readyz()
			return fmt.Sprintf("/readyz after the takeover = %d %q", code, body)
		})
	writePod(t, dir, "nginx:1.30")
	poll(t, func() bool { return second.has("StaticPodUpdated", "image 1.29 → 1.30") }, second.dump)
	// Stdout is in order: anything announced at the takeover came first.
	if evs := second.events(); len(evs) != 1 {
		t.Errorf("after the takeover the second printed %d Events, want the one UPDATE:\n%s", len(evs), second.dump())
	}
	if !strings.Contains(second.logs.String(), "standing by") || !strings.Contains(second.logs.String(), "taking over") {
		t.Errorf("the second's log does not say it stood by and took over:\n%s", second.logs.String())
	}
}
