package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEventsCommandUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runEvents([]string{"--output", "yaml"}, &out, &errOut, time.Now()); code != 2 {
		t.Fatalf("bad --output: exit %d", code)
	}
	if code := runEvents([]string{"--state-dir", t.TempDir()}, &out, &errOut, time.Now()); code != 0 || !strings.Contains(errOut.String(), "No events found") {
		t.Fatalf("empty state dir: exit %d stderr %q", code, errOut.String())
	}
}

// A --state-dir that is not there is most likely a typo: saying "No events
// found" with exit 0 would tell the operator all is quiet. An existing
// folder the agent has not written events.log in yet is quiet.
func TestEventsCommandStateDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "events.log")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, stateDir, stderr string
	}{
		{"missing", filepath.Join(dir, "typo"), "podwatch events: state dir " + filepath.Join(dir, "typo") + ": file does not exist\n"},
		{"a file", file, "podwatch events: state dir " + file + " is not a directory\n"},
	} {
		for _, output := range []string{"wide", "json"} {
			t.Run(tt.name+" -o "+output, func(t *testing.T) {
				var out, errOut bytes.Buffer
				code := runEvents([]string{"--state-dir", tt.stateDir, "-o", output}, &out, &errOut, time.Now())
				if code != 1 || out.Len() > 0 || errOut.String() != tt.stderr {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no stdout, stderr %q", code, out.String(), errOut.String(), tt.stderr)
				}
			})
		}
	}
	var out, errOut bytes.Buffer
	empty := t.TempDir()
	if code := runEvents([]string{"--state-dir", empty}, &out, &errOut, time.Now()); code != 0 || out.Len() > 0 || errOut.String() != "No events found in "+empty+".\n" {
		t.Errorf("state dir without events.log: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// -o json prints kind List, as kubectl get events -o json does; the help
// and the README must name that kind, not EventList, or a script written
// from them looks for the wrong one.
func TestEventsJSONKindMatchesDocs(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runEvents([]string{"--state-dir", t.TempDir(), "-o", "json"}, &out, &errOut, time.Now()); code != 0 {
		t.Fatalf("-o json: exit %d, stderr %q", code, errOut.String())
	}
	var list struct{ Kind string }
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" {
		t.Fatalf("-o json kind = %q, want List as kubectl prints", list.Kind)
	}
	out.Reset()
	errOut.Reset()
	runEvents([]string{"--help"}, &out, &errOut, time.Now())
	help := out.String() + errOut.String()
	if !strings.Contains(help, "a v1 List of Events") || strings.Contains(help, "EventList") {
		t.Errorf("podwatch events --help does not say -o json prints a v1 List:\n%s", help)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(readme), "EventList") || !strings.Contains(string(readme), "`-o json` prints the Events as a `v1` `List`") {
		t.Errorf("README.md does not say podwatch events -o json prints a v1 List")
	}
}
