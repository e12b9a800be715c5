package e2e

// Scenarios that mount something for real (a tmpfs, a read-only bind
// mount) run in a re-executed test binary in a private mount namespace,
// so the host never sees the mounts.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// requireEnv, set to 1 (as CI sets it), fails a test that needs root and a
// mount namespace instead of skipping it.
const requireEnv = "PODWATCH_REQUIRE_KUBELET"

// mountSkip starts the line a child prints when the kernel refuses it a
// mount: the test is skipped, not failed, unless required.
const mountSkip = "MOUNT-SKIP: "

func skipUnlessRequired(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s; %s=1 requires it to run", why, requireEnv)
	}
	t.Skip(why)
}

// inPrivateMounts runs the test name again in a child in a new mount
// namespace, with env=value set for the child to play the scenario, and
// fails unless the child passed. It checks that no mount point appeared
// on the host meanwhile.
func inPrivateMounts(t *testing.T, name, env, value string) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipUnlessRequired(t, "needs root for a private mount namespace")
	}
	before := mountPoints(t)
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), env+"="+value)
	// The child starts in a new mount namespace; Go marks its / private
	// (MS_REC|MS_PRIVATE) before exec, so no mount propagates back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		skipUnlessRequired(t, fmt.Sprintf("cannot start a child in a new mount namespace here: %v", err))
	}
	if _, reason, ok := strings.Cut(string(out), mountSkip); ok {
		reason, _, _ = strings.Cut(reason, "\n")
		skipUnlessRequired(t, "the kernel refuses the child's mounts here: "+reason)
	}
	t.Logf("child:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s failed in the child: %v", name, err)
	}
	for _, p := range mountPoints(t) {
		if !slices.Contains(before, p) {
			t.Errorf("mount point %s appeared on the host during the test", p)
		}
	}
}

// mountPoints lists this mount namespace's mount points.
func mountPoints(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			out = append(out, f[4])
		}
	}
	return out
}
