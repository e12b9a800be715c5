//go:build linux

package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The host check looks where the kubelet makes folders at start, the
// FlexVolume plugin dir among them, and at /etc/kubernetes, kubeadm's
// hostPath root: a folder made there shows in the Diff.
func TestHostCheckSeesTheKubeletsFolders(t *testing.T) {
	for _, d := range []string{"/usr/libexec/kubernetes/kubelet-plugins/volume/exec", "/etc/kubernetes/pki", "/var/lib/kubelet/pki", "/var/log/pods"} {
		root := t.TempDir()
		before, err := readHost(root)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		after, err := readHost(root)
		if err != nil {
			t.Fatal(err)
		}
		if diff := before.Diff(after); !strings.Contains(diff, filepath.Join(root, d)) {
			t.Errorf("%s made: the host check says %q", d, diff)
		}
	}
}

// hostPathsOf names every hostPath volume's path and every subPath of a
// mount of one; CreatedSince names the top of what was made since.
func TestHostPathsOfAManifestAndWhatWasCreated(t *testing.T) {
	base := t.TempDir()
	manifest := hostPathPod(base)
	got := hostPathsOf([]byte(manifest))
	want := []string{base + "/etc-kubernetes/pki", base + "/scheduler.conf", base + "/var/lib/etcd", base + "/etc-kubernetes/pki/sub/dir"}
	if !slices.Equal(got, want) {
		t.Fatalf("hostPathsOf = %q, want %q", got, want)
	}
	if p := hostPathsOf([]byte("not: [a pod")); p != nil {
		t.Errorf("hostPathsOf(garbage) = %q", p)
	}

	since := fsAfter(t, base)
	if err := os.MkdirAll(filepath.Join(base, "etc-kubernetes", "pki", "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	created, err := CreatedSince(got, since)
	if err != nil {
		t.Fatal(err)
	}
	// The base was there before; what MkdirAll made starts one below it.
	if want := []string{base + "/etc-kubernetes"}; !slices.Equal(created, want) {
		t.Errorf("CreatedSince = %q, want %q", created, want)
	}
	if created, err := CreatedSince(got, fsAfter(t, base)); err != nil || len(created) != 0 {
		t.Errorf("CreatedSince(later) = %q, %v; want nothing", created, err)
	}
}

// fsAfter is FSNow(dir), returned once the file system's clock has moved
// past it: what is made next is born after it.
func fsAfter(t *testing.T, dir string) time.Time {
	t.Helper()
	first, err := FSNow(dir)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		now, err := FSNow(dir)
		if err != nil {
			t.Fatal(err)
		}
		if now.After(first) {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file system's clock in %s stays at %v", dir, first)
		}
	}
}

// hostPathPod is a kubeadm-style static pod whose hostPath volumes, of
// type DirectoryOrCreate and FileOrCreate, lie under base.
func hostPathPod(base string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: hostpaths
  namespace: kube-system
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    volumeMounts:
    - {name: pki, mountPath: /etc/kubernetes/pki}
    - {name: conf, mountPath: /etc/kubernetes/scheduler.conf}
    - {name: etcd, mountPath: /var/lib/etcd}
    - {name: pki, mountPath: /data, subPath: sub/dir}
  volumes:
  - name: pki
    hostPath: {path: ` + base + `/etc-kubernetes/pki, type: DirectoryOrCreate}
  - name: conf
    hostPath: {path: ` + base + `/scheduler.conf, type: FileOrCreate}
  - name: etcd
    hostPath: {path: ` + base + `/var/lib/etcd, type: Directory}
`
}

// With the real kubelet: its FlexVolume plugin dir is in the run folder,
// not on the host; and the hostPath volumes of a kubeadm-style manifest it
// runs, which it does make on the host (outside its tmpfs folders), are
// named by CreatedOnHost, as ForTest's check names them. The test removes
// them again so that the check passes.
func TestKubeletHostPathVolumesAreChecked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := t.TempDir()
	// The pod's volume of type Directory must exist for the kubelet to
	// mount it; it is there before the kubelet starts.
	if err := os.MkdirAll(filepath.Join(base, "var", "lib", "etcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "k")
	k := ForTest(ctx, t, Config{Dir: dir, NodeName: "hostpath-node"})
	if _, err := os.Stat(filepath.Join(dir, "volume-plugins")); err != nil {
		t.Errorf("the kubelet's volume plugin dir is not in the run folder: %v", err)
	}
	file := filepath.Join(k.Manifests, "hostpaths.yaml")
	if err := os.WriteFile(file, []byte(hostPathPod(base)), 0o644); err != nil {
		t.Fatal(err)
	}
	made := []string{filepath.Join(base, "etc-kubernetes", "pki", "sub", "dir"), filepath.Join(base, "scheduler.conf")}
	missing := func(p string) bool { _, err := os.Stat(p); return err != nil }
	deadline := time.Now().Add(90 * time.Second)
	for slices.ContainsFunc(made, missing) {
		if time.Now().After(deadline) {
			t.Fatalf("the kubelet did not make %q within 90s; its log:\n%s", made, k.LogTail(40))
		}
		time.Sleep(100 * time.Millisecond)
	}
	created, err := k.CreatedOnHost()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(base, "etc-kubernetes"), filepath.Join(base, "scheduler.conf")}; !slices.Equal(created, want) {
		t.Errorf("CreatedOnHost = %q, want %q", created, want)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(base, "etc-kubernetes"), filepath.Join(base, "scheduler.conf")} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
}
