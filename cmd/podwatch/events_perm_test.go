package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// eventsChildEnv carries the arguments of a podwatch events run in a child
// process, one a line, to TestEventsCommandUnreadableStateDir.
const eventsChildEnv = "PODWATCH_TEST_EVENTS_ARGS"

// unprivilegedUID is nobody's: the child runs as it when the test is root.
const unprivilegedUID = 65534

// A state dir whose files this user may not reach is an error that names
// the dir, exit 1, not a failure about events.log inside it; one it may
// enter but not list still reads. Root reads any folder, so as root each
// run is a child process (this test binary again) under an unprivileged
// uid, which owns the folders as the test's user does otherwise.
func TestEventsCommandUnreadableStateDir(t *testing.T) {
	if args, ok := os.LookupEnv(eventsChildEnv); ok {
		os.Exit(runEvents(strings.Split(args, "\n"), os.Stdout, os.Stderr, time.Now()))
	}
	asRoot := os.Geteuid() == 0
	// Every folder on the way must be reachable by the child: not so
	// t.TempDir's, which are 0700.
	base, err := os.MkdirTemp("", "podwatch-events-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	var exe string
	if asRoot {
		exe = filepath.Join(base, "podwatch.test")
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if err := copyFile(self, exe, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, args []string) (code int, stdout, stderr string) {
		if !asRoot {
			var out, errOut bytes.Buffer
			code := runEvents(args, &out, &errOut, time.Now())
			return code, out.String(), errOut.String()
		}
		cmd := exec.Command(exe, "-test.run=^TestEventsCommandUnreadableStateDir$", "-test.count=1")
		cmd.Env = append(os.Environ(), eventsChildEnv+"="+strings.Join(args, "\n"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivilegedUID, Gid: unprivilegedUID}}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("child as uid %d: %v", unprivilegedUID, err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}

	for _, tt := range []struct {
		name   string
		mode   os.FileMode
		code   int
		stderr string // DIR stands for the state dir
	}{
		{"no permission", 0o000, 1, "podwatch events: state dir DIR: permission denied\n"},
		{"list but not enter", 0o400, 1, "podwatch events: state dir DIR: permission denied\n"},
		{"enter but not list", 0o100, 0, "No events found in DIR.\n"},
	} {
		dir := filepath.Join(base, strings.ReplaceAll(tt.name, " ", "-"))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "events.log"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if asRoot {
			if err := os.Chown(dir, unprivilegedUID, unprivilegedUID); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, tt.mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) }) // so that base can be removed
		for _, output := range []string{"wide", "json"} {
			t.Run(tt.name+" -o "+output, func(t *testing.T) {
				code, stdout, stderr := run(t, []string{"--state-dir", dir, "-o", output})
				want, wantOut := strings.ReplaceAll(tt.stderr, "DIR", dir), ""
				if output == "json" && tt.code == 0 {
					want, wantOut = "", "{\n    \"kind\": \"List\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {},\n    \"items\": []\n}\n"
				}
				if code != tt.code || stderr != want || stdout != wantOut {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q", code, stdout, stderr, tt.code, wantOut, want)
				}
			})
		}
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
