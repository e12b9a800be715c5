//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The test binary doubles as the floor watcher's process, as the command
// does with -floor.
func TestMain(m *testing.M) {
	if dir := os.Getenv("USERLATENCY_TEST_FLOOR"); dir != "" {
		if err := runFloor(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The floor watcher, a real process on a real inotify watch, prints the
// renamed file's line, not the staged write's, and a wait for a line that
// never comes fails at its deadline.
func TestFloorWatcherSeesTheRename(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir, stage := filepath.Join(root, "m"), filepath.Join(root, "stage")
	for _, d := range []string{dir, stage} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := startWatcher("floor", self, nil, append(os.Environ(), "USERLATENCY_TEST_FLOOR="+dir), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop(5 * time.Second)
	if _, err := w.wait(time.Now().Add(30*time.Second), "ready", func(b []byte) bool { return string(b) == "ready\n" }); err != nil {
		t.Fatal(err)
	}
	content := manifestYAML("p")
	// Written in place: no IN_MOVED_TO, so no line.
	if err := os.WriteFile(filepath.Join(dir, "direct.yaml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "p.yaml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := os.Rename(filepath.Join(stage, "p.yaml"), filepath.Join(dir, "p.yaml")); err != nil {
		t.Fatal(err)
	}
	var got string
	at, err := w.wait(time.Now().Add(30*time.Second), "p.yaml", func(b []byte) bool { got = string(b); return true })
	if err != nil {
		t.Fatal(err)
	}
	if want := floorLine("p.yaml", len(content)) + "\n"; got != want {
		t.Errorf("first line after the rename = %q, want %q", got, want)
	}
	if at.Before(start) {
		t.Errorf("line read at %v, before the rename at %v", at, start)
	}
	_, err = w.wait(time.Now().Add(100*time.Millisecond), "a line never printed", func([]byte) bool { return true })
	if !errors.Is(err, errNoLine) {
		t.Errorf("wait past its deadline: err = %v, want errNoLine", err)
	}
}
