package published

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/store"
)

func mustLoad(t *testing.T, dir string, log *slog.Logger) diff.State {
	t.Helper()
	s, err := Load(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every file of the published state says its format.
func TestStateFilesCarryTheVersion(t *testing.T) {
	dir := t.TempDir()
	w := &shardWriter{dir: dir}
	if err := w.write(diff.State{Pods: podStates(3, "nginx:1"), Salt: []byte("salt")}); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "pods-*.json"))
	for _, path := range append(names, filepath.Join(dir, StateFile)) {
		var probe struct {
			Version *int `json:"version"`
		}
		if err := store.ReadJSON(dir, filepath.Base(path), &probe); err != nil || probe.Version == nil || *probe.Version != Version {
			t.Fatalf("%s: version %v (%v), want %d", path, probe.Version, err, Version)
		}
	}
}

// A state a newer podwatch wrote (after a downgrade) is read, with a
// warning that names the file, and the file is left as it is.
func TestNewerStateIsReadWithAWarning(t *testing.T) {
	dir := t.TempDir()
	w := &shardWriter{dir: dir}
	if err := w.write(diff.State{Pods: podStates(3, "nginx:1"), Salt: []byte("salt")}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, StateFile)
	newer := `{"version":99,"salt":"c2FsdA==","somethingNew":{"a":1}}` + "\n"
	if err := os.WriteFile(path, []byte(newer), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testutil.LockedBuffer
	got := mustLoad(t, dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if len(got.Pods) != 3 {
		t.Fatalf("loaded %d pods, want 3", len(got.Pods))
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "newer podwatch") || !strings.Contains(l, path) {
		t.Fatalf("no warning naming %s: %s", path, l)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != newer {
		t.Fatalf("the newer file was changed or moved: %q %v", b, err)
	}
}

// A state a newer podwatch wrote that this one cannot read stops the load
// with an error naming the file, rather than a start from nothing that
// would announce every pod again; the file is not set aside.
func TestUnreadableNewerStateStops(t *testing.T) {
	for _, name := range []string{StateFile, shardName(7)} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(`{"version":2,"pods":["a new shape"]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, slog.New(slog.DiscardHandler))
			var ne *NewerError
			if !errors.Is(err, ErrNewer) || !errors.As(err, &ne) || ne.Path != path || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load = %v, want a NewerError naming %s", err, path)
			}
			if _, serr := os.Stat(path); serr != nil {
				t.Fatalf("the newer file was set aside: %v", serr)
			}
		})
	}
}

// A file of this format or older that cannot be read is still set aside
// and costs only what it held.
func TestCorruptOwnStateIsStillSetAside(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"version":1,"pods":["bad"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("Load = %v, want the corrupt file set aside", err)
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile)); !os.IsNotExist(err) {
		t.Fatalf("corrupt state.json still in place: %v", err)
	}
}
