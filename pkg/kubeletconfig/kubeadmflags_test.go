package kubeletconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFlags(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeadm-flags.env")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHostnameOverride(t *testing.T) {
	for body, want := range map[string]string{
		// As kubeadm writes it.
		`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --hostname-override=CP1 --pod-infra-container-image=registry.k8s.io/pause:3.10"` + "\n": "CP1",
		`KUBELET_KUBEADM_ARGS="--hostname-override cp-2 --node-ip=10.0.0.2"`:                         "cp-2",
		`KUBELET_KUBEADM_ARGS='-hostname-override=a --hostname-override=b'`:                          "b",
		"# comment\nexport KUBELET_KUBEADM_ARGS=--hostname-override=plain\n":                         "plain",
		`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock"`: "",
		`OTHER="--hostname-override=nope"`:                                                           "",
		"":                                                                                           "",
	} {
		got, err := HostnameOverride(writeFlags(t, body))
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", body, got, err, want)
		}
	}
}

func TestHostnameOverrideErrors(t *testing.T) {
	if _, err := HostnameOverride(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	p := writeFlags(t, "x=1\nKUBELET_KUBEADM_ARGS=\"--hostname-override=a\n")
	if _, err := HostnameOverride(p); err == nil || !strings.Contains(err.Error(), p+":2:") {
		t.Errorf("unbalanced quote: %v, want an error naming %s:2", err, p)
	}
	if _, err := HostnameOverride(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a kubeadm flags file") {
		t.Errorf("a directory: %v", err)
	}
}
