package file

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	"go.uber.org/goleak"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/manifest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testNode = "node-1"
	// waitLimit bounds every wait for a snapshot; the events themselves take
	// milliseconds, the restart of a missing path about a second.
	waitLimit = 10 * time.Second
)

func podYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: "%s"
spec:
  containers:
  - name: c
    image: "%s"
`, name, image)
}

const invalidYAML = "apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n"

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTestSource builds a Source on path with the real clock, relisting
// rarely so that what tests see comes from the watch.
func newTestSource(t *testing.T, path string, clk clock.WithTicker) *Source {
	t.Helper()
	if clk == nil {
		clk = clock.RealClock{}
	}
	s, err := New(Options{Path: path, NodeName: testNode, FileCheckFrequency: time.Hour}, clk, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// countDecodes makes s count its decodes.
func countDecodes(s *Source) *atomic.Int64 {
	var n atomic.Int64
	s.decode = func(data []byte, o manifest.Options) (*types.Pod, error) {
		n.Add(1)
		return manifest.Decode(data, o)
	}
	return &n
}

// countOpens makes s count the files (not directories) it opens.
func countOpens(s *Source) *atomic.Int64 {
	var n atomic.Int64
	s.openFile = func(name string, flag int, perm fs.FileMode) (*os.File, error) {
		if name != s.path || s.single {
			n.Add(1)
		}
		return os.OpenFile(name, flag, perm)
	}
	return &n
}

type harness struct {
	t   *testing.T
	out chan types.Snapshot
}

// start runs s until the test ends, and checks Run then returns nil.
func start(t *testing.T, s *Source) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, out: make(chan types.Snapshot)}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, h.out) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("Run did not return within %v of cancel", waitLimit)
		}
	})
	return h
}

func (h *harness) next() types.Snapshot {
	h.t.Helper()
	select {
	case s := <-h.out:
		return s
	case <-time.After(waitLimit):
		h.t.Fatalf("no snapshot within %v", waitLimit)
		return types.Snapshot{}
	}
}

// waitFor returns the first snapshot that satisfies ok.
func (h *harness) waitFor(what string, ok func(types.Snapshot) bool) types.Snapshot {
	h.t.Helper()
	deadline := time.After(waitLimit)
	var last types.Snapshot
	for {
		select {
		case s := <-h.out:
			if ok(s) {
				return s
			}
			last = s
		case <-deadline:
			h.t.Fatalf("no snapshot with %s within %v; last: %s", what, waitLimit, describe(last))
			return types.Snapshot{}
		}
	}
}

func describe(s types.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "relist=%v single=%v pathErr=%v watch=%+v files=[", s.Relist, s.Single, s.PathErr, s.Watch)
	for _, f := range s.Files {
		fmt.Fprintf(&b, " %s(pod=%s err=%v readErr=%v notRegular=%v mode=%v complete=%v)",
			f.Name, podKey(f.Pod), f.Err, f.ReadErr, f.NotRegular, f.Mode, f.Complete)
	}
	b.WriteString(" ]")
	return b.String()
}

func fileIn(s types.Snapshot, name string) (types.File, bool) {
	for _, f := range s.Files {
		if f.Name == name {
			return *f, true
		}
	}
	return types.File{}, false
}

func namesOf(s types.Snapshot) []string {
	var n []string
	for _, f := range s.Files {
		n = append(n, f.Name)
	}
	return n
}

func image(f types.File) string {
	if f.Pod == nil || len(f.Pod.Containers) == 0 {
		return ""
	}
	_, img, _ := strings.Cut(f.Pod.Containers[0], "=")
	return img
}

// hasImage is a predicate: name is valid and runs img.
func hasImage(name, img string) func(types.Snapshot) bool {
	return func(s types.Snapshot) bool {
		f, ok := fileIn(s, name)
		return ok && image(f) == img
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// moveIn writes content in a staging directory beside dir and renames it to
// dir/name, as atomic writers do.
func moveIn(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "staging-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// fakeWatcher stands in for inotify where a test needs to script events or
// failures.
type fakeWatcher struct {
	ch     chan watchBatch
	single bool
	closed atomic.Bool
}

func newFakeWatcher() *fakeWatcher               { return &fakeWatcher{ch: make(chan watchBatch)} }
func (f *fakeWatcher) Events() <-chan watchBatch { return f.ch }
func (f *fakeWatcher) Single() bool              { return f.single }
func (f *fakeWatcher) Close()                    { f.closed.Store(true) }

func (f *fakeWatcher) push(t *testing.T, b watchBatch) {
	t.Helper()
	select {
	case f.ch <- b:
	case <-time.After(waitLimit):
		t.Fatalf("source did not take a watch batch within %v", waitLimit)
	}
}
