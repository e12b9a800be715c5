package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// The DaemonSet's way in: no --kubeconfig, $KUBERNETES_SERVICE_HOST set, and
// the service account's token and CA where the kubelet mounts them. The
// built binary runs in a private mount namespace whose /var/run is a fresh
// tmpfs holding them, so the host is not touched; it authenticates with a
// TokenRequest token of the deploy's service account, and its Warning
// reaches the API.
func TestInClusterConfigAsTheDaemonSet(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) here")
	}
	if out, err := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs tmpfs /var/run").CombinedOutput(); err != nil {
		t.Skipf("no private mount namespace here: %v %s", err, out)
	}
	s, c := setup(t)
	work := t.TempDir()
	bin := filepath.Join(work, "podwatch")
	build := exec.Command("go", "build", "-o", bin, "./cmd/podwatch")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sa := filepath.Join(work, "sa")
	manifests := filepath.Join(work, "manifests")
	for _, d := range []string{sa, manifests} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{
		filepath.Join(sa, "token"):     []byte(serviceAccountToken(t, c, "podwatch", "podwatch")),
		filepath.Join(sa, "ca.crt"):    s.CAPEM(),
		filepath.Join(sa, "namespace"): []byte("podwatch"),
		filepath.Join(manifests, "etcd.yaml"): []byte(
			"apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const script = `set -e
mount -t tmpfs -o mode=0755 tmpfs /var/run
mkdir -p /var/run/secrets/kubernetes.io/serviceaccount
cp "$SA"/* /var/run/secrets/kubernetes.io/serviceaccount/
exec "$BIN" --path "$M" --node-name "$NODE" --state-dir "$STATE" -o json --log-format json \
  --metrics-bind-address 0 --settle-delay 100ms --file-check-frequency 500ms --shutdown-timeout 5s`
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT="+strconv.Itoa(s.Port()),
		"SA="+sa, "BIN="+bin, "M="+manifests, "NODE="+node, "STATE="+filepath.Join(work, "state"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", stderr.String())
		}
	})

	eventually(t, "the InvalidManifest Warning in the API", func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("agent exited early: %v", err)
		default:
		}
		evs, err := describeNodeEvents(ctx, c, node)
		m := byReason(evs, types.ReasonInvalid)
		return len(m) == 1 && bytes.Contains([]byte(m[0].Message), []byte("etcd.yaml")), err
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("agent exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("agent did not exit within 15s of SIGTERM")
	}
	if !bytes.Contains(stderr.Bytes(), []byte(`"config":"in-cluster"`)) {
		t.Errorf("the agent did not say it used the in-cluster config:\n%s", stderr.String())
	}
}
