package main

import (
	"os"
	"strings"
	"testing"
)

func TestRealMainUsageAndVersion(t *testing.T) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var out strings.Builder
	if code := realMain([]string{"version"}, &out, devnull); code != 0 || !strings.HasPrefix(out.String(), "podwatch ") {
		t.Fatalf("version: code %d out %q", code, out.String())
	}
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--output", "yaml", "--node-name", "n"},
		{"--settle-delay", "-1s", "--node-name", "n"},
		{"--node-name", "node_1", "--path", os.TempDir()},
		{"bogus"},
		{"version", "--bogus"},
		{"version", "extra"},
		{"help", "bogus"},
		{"help", "check", "events"},
	} {
		if code := realMain(args, &out, devnull); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	errFile, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	if code := realMain([]string{"--no-such-flag"}, &out, errFile); code != 2 {
		t.Fatalf("unknown flag: exit %d", code)
	}
	if b, _ := os.ReadFile(errFile.Name()); !strings.Contains(string(b), "unknown flag: --no-such-flag") {
		t.Fatalf("unknown flag: stderr %q does not say what is wrong", b)
	}
	if code := realMain([]string{"--help"}, &out, devnull); code != 0 {
		t.Errorf("--help: exit %d, want 0", code)
	}
}

// A negative --file-check-frequency is refused at start with exit 2 and an
// error that says 0 is the way to ask for the default.
func TestNegativeFileCheckFrequencyIsAUsageError(t *testing.T) {
	errFile, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	var out strings.Builder
	code := realMain([]string{"--file-check-frequency", "-1s", "--node-name", "n", "--path", t.TempDir()}, &out, errFile)
	stderr, _ := os.ReadFile(errFile.Name())
	want := "podwatch: --file-check-frequency must not be negative (0 means the default, 20s), got -1s\n"
	if code != 2 || string(stderr) != want {
		t.Errorf("exit %d, stderr %q; want exit 2, stderr %q", code, stderr, want)
	}
}
