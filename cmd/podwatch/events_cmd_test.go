package main

import (
	"bytes"
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
