package e2e

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// probeSocketEnv makes the test binary, re-executed under the credentials a
// test gives it, probe the unix socket the variable names and print what
// the kernel said (see probeSocket): the opt-in installs' claims about the
// container runtime's socket, held to the real kernel's permission checks.
const probeSocketEnv = "PODWATCH_TEST_PROBE_SOCKET"

// probeSecretEnv names a root-only 0600 file the probe reads, to show its
// CAP_DAC_READ_SEARCH is in effect.
const probeSecretEnv = "PODWATCH_TEST_PROBE_SECRET"

// errName is what a probe prints for err: ok, or the errno's name.
func errName(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno) && errno == syscall.EACCES:
		return "EACCES"
	case errors.As(err, &errno) && errno == syscall.EROFS:
		return "EROFS"
	default:
		return err.Error()
	}
}

// probeSocket prints "connect=R read=R create=R": connecting to sock,
// reading the file in probeSecretEnv, creating a file beside sock.
func probeSocket(sock string) {
	c, err := net.Dial("unix", sock)
	if err == nil {
		c.Close()
	}
	connect := errName(err)
	_, err = os.ReadFile(os.Getenv(probeSecretEnv))
	read := errName(err)
	f, err := os.Create(filepath.Join(filepath.Dir(sock), "probe"))
	if err == nil {
		f.Close()
	}
	fmt.Printf("connect=%s read=%s create=%s\n", connect, read, errName(err))
	os.Exit(0)
}

// A throwaway group standing for the one containerd's [grpc] gid gives the
// socket; the kernel needs no /etc/group entry for it.
const runtimeGID = 64999

// What docs/following.md and the opt-in files say about the container runtime's
// socket, containerd's root:root 0660 by default, checked against the
// kernel with the credentials each install runs podwatch under:
//   - the systemd unit (a non-root dynamic user in no other group, with
//     ambient CAP_DAC_READ_SEARCH) cannot connect, though that capability
//     lets it read root-only files; with follow.conf's supplementary group
//     owning the socket it can;
//   - the DaemonSet (uid 0, every capability dropped but DAC_READ_SEARCH)
//     connects as the socket's owner, and through a read-only mount of the
//     socket's folder too: read-only stops writing files there, not
//     connect();
//   - a socket uid 0 does not own refuses that pod, so the capabilities
//     really were dropped (full root would pass by CAP_DAC_OVERRIDE).
func TestCRISocketAccessOfTheInstalls(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the probes switch uid, capabilities and mount namespace")
	}
	for _, tool := range []string{"setpriv", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (util-linux): %v", tool, err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Outside t.TempDir, whose parents may be 0700 to other users.
	dir, err := os.MkdirTemp(os.TempDir(), "podwatch-cri-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	runDir := filepath.Join(dir, "run-containerd")
	if err := os.Mkdir(runDir, 0o711); err != nil { // as containerd makes it
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(runDir, "containerd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Chmod(sock, 0o660); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "kube-apiserver.yaml")
	if err := os.WriteFile(secret, []byte("kind: Pod\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Mounted read-only by each probe in its own mount namespace, as the
	// DaemonSet's readOnly hostPath mounts the folder.
	roDir := filepath.Join(dir, "ro")
	if err := os.Mkdir(roDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// The unit's credentials: DynamicUser (a uid of its own, here 65534, in
	// no other group) with its one capability ambient and bounding.
	unitCaps := []string{"--inh-caps", "-all,+dac_read_search", "--ambient-caps", "-all,+dac_read_search",
		"--bounding-set", "-all,+dac_read_search"}
	unit := append([]string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"}, unitCaps...)
	unitFollow := append([]string{"setpriv", "--reuid", "65534", "--regid", "65534", "--groups", fmt.Sprint(runtimeGID)}, unitCaps...)
	// The DaemonSet's container: uid 0, capabilities drop ALL, add
	// DAC_READ_SEARCH.
	pod := []string{"setpriv", "--inh-caps", "-all", "--bounding-set", "-all,+dac_read_search"}

	for _, c := range []struct {
		name     string
		owner    [2]int // the socket's uid, gid
		as       []string
		readOnly bool
		want     string
	}{
		{"unit", [2]int{0, 0}, unit, false, "connect=EACCES read=ok create=EACCES"},
		{"unit+follow.conf", [2]int{0, runtimeGID}, unitFollow, false, "connect=ok read=ok create=EACCES"},
		{"unit+follow.conf, socket root:root", [2]int{0, 0}, unitFollow, false, "connect=EACCES read=ok create=EACCES"},
		{"daemonset", [2]int{0, 0}, pod, false, "connect=ok read=ok create=ok"},
		{"daemonset, read-only mount", [2]int{0, 0}, pod, true, "connect=ok read=ok create=EROFS"},
		{"daemonset, socket not uid 0's", [2]int{1, 1}, pod, false, "connect=EACCES read=ok create=ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.Chown(sock, c.owner[0], c.owner[1]); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(runDir, "probe")); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			probeSock := sock
			args := append(append([]string(nil), c.as...), self, "-test.run=^$")
			if c.readOnly {
				probeSock = filepath.Join(roDir, "containerd.sock")
				script := `mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"`
				args = append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", runDir, roDir}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), probeSocketEnv+"="+probeSock, probeSecretEnv+"="+secret)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
			}
			if got := strings.TrimSpace(string(out)); got != c.want {
				t.Errorf("socket %d:%d 0660, as %s: %s, want %s", c.owner[0], c.owner[1], strings.Join(c.as, " "), got, c.want)
			}
		})
	}
}
