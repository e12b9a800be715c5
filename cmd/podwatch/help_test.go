package main

import (
	"os"
	"strings"
	"testing"
)

// --help (or podwatch help) is asked for, not an error: like every other tool it goes to
// stdout, so `podwatch --help | less` works, and exits 0, for the agent and
// each subcommand alike.
func TestHelpOnStdout(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		start      string // the usage text's first line
		flagInHelp string
	}{
		{[]string{"--help"}, "podwatch watches the kubelet's static pod manifests", "--file-check-frequency duration"},
		{[]string{"-h"}, "podwatch watches the kubelet's static pod manifests", "--file-check-frequency duration"},
		{[]string{"events", "--help"}, "Prints the events in podwatch's local store", "--state-dir string"},
		{[]string{"events", "-h"}, "Prints the events in podwatch's local store", "--state-dir string"},
		{[]string{"check", "--help"}, "podwatch check lints static pod manifests", "--strict"},
		{[]string{"check", "-h"}, "podwatch check lints static pod manifests", "--strict"},
		{[]string{"version", "--help"}, "Prints podwatch's version.\n\nUsage:\n  podwatch version\n", ""},
		{[]string{"version", "-h"}, "Prints podwatch's version.\n\nUsage:\n  podwatch version\n", ""},
		// What git and kubectl users type: the same help.
		{[]string{"help"}, "podwatch watches the kubelet's static pod manifests", "--file-check-frequency duration"},
		{[]string{"help", "events"}, "Prints the events in podwatch's local store", "--state-dir string"},
		{[]string{"help", "check"}, "podwatch check lints static pod manifests", "--strict"},
		{[]string{"help", "version"}, "Prints podwatch's version.\n\nUsage:\n  podwatch version\n", ""},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			errFile, err := os.CreateTemp(t.TempDir(), "stderr")
			if err != nil {
				t.Fatal(err)
			}
			defer errFile.Close()
			var out strings.Builder
			code := realMain(tt.args, &out, errFile)
			stderr, err := os.ReadFile(errFile.Name())
			if err != nil {
				t.Fatal(err)
			}
			if code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			if !strings.HasPrefix(out.String(), tt.start) || !strings.Contains(out.String(), tt.flagInHelp) {
				t.Errorf("stdout = %q, want the usage starting %q and listing %s", out.String(), tt.start, tt.flagInHelp)
			}
			if len(stderr) > 0 {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
		})
	}
}
