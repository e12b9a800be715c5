package main

import (
	"os"
	"strings"
	"testing"
)

// The systemd unit's ExecStart must name only flags the agent has: a
// renamed flag would crash-loop every node that installed the package.
func TestSystemdUnitFlagsParse(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/systemd/podwatch.service")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(unit), "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			args = strings.Fields(rest)[1:]
		}
	}
	if len(args) == 0 {
		t.Fatal("no ExecStart in the unit")
	}
	for i, a := range args {
		if a == "$PODWATCH_ARGS" {
			args[i] = "--help" // parses every flag before it, then exits 0
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var out strings.Builder
	if code := realMain(args, &out, devnull); code != 0 {
		t.Fatalf("podwatch %s: exit %d", strings.Join(args, " "), code)
	}
}
