package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/podwatch/podwatch/test/tools/apiserver"
)

// deployObject is one object of deploy/kubernetes, as kubectl names it.
type deployObject struct {
	kind, namespace, name string
}

// deployObjects reads every object the .yaml files of deploy/kubernetes
// define, so the test below expects what the files say, not a copy.
func deployObjects(t *testing.T) []deployObject {
	t.Helper()
	var objs []deployObject
	for _, f := range deployFiles(t) {
		data, err := os.ReadFile(filepath.Join(deployDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			var o struct {
				metav1.TypeMeta `json:",inline"`
				Metadata        metav1.ObjectMeta `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			objs = append(objs, deployObject{o.Kind, o.Metadata.Namespace, o.Metadata.Name})
		}
	}
	return objs
}

// The Kustomization lists every .yaml of the folder, so -k and -f install
// the same objects.
func TestDeployKustomizationListsEveryFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "Kustomization"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if want := deployFiles(t); !slices.Equal(got, want) {
		t.Errorf("Kustomization resources = %v, want the folder's .yaml files %v", got, want)
	}
}

// What the README tells operators to run, with the real kubectl, on a
// fresh API server: each way must succeed the first time and create every
// object. kubectl applies a folder's files in name order and fails on an
// object whose namespace does not exist yet, so a DaemonSet sorting before
// the Namespace breaks -f; -k must find the Kustomization that -f skips.
func TestKubectlApplyDeploy(t *testing.T) {
	t.Parallel()
	want := deployObjects(t)
	for _, mode := range []string{"-f", "-k"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := apiserver.Start(t)
			ctx := context.Background()
			out, err := s.Kubectl(ctx, apiserver.AdminToken, "apply", mode, deployDir)
			if err != nil {
				t.Fatalf("kubectl apply %s %s on a fresh cluster: %v\n%s", mode, deployDir, err, out)
			}
			for _, o := range want {
				args := []string{"get", o.kind, o.name, "-o", "jsonpath={.metadata.name}"}
				if o.namespace != "" {
					args = append(args, "-n", o.namespace)
				}
				got, err := s.Kubectl(ctx, apiserver.AdminToken, args...)
				if err != nil || got != o.name {
					t.Errorf("after kubectl apply %s: %s %s/%s: got %q, %v", mode, o.kind, o.namespace, o.name, got, err)
				}
			}
			// The base grants no runtime access: that is the overlay's.
			ds := servedDaemonSet(ctx, t, s)
			if vol, mount, flag := runtimeAccess(ds); vol != nil || mount != nil || flag != "" {
				t.Errorf("after kubectl apply %s: the base DaemonSet reaches the container runtime: volume %+v, mount %+v, flag %q", mode, vol, mount, flag)
			}
			t.Logf("kubectl apply %s:\n%s", mode, out)
		})
	}
}

// What the follow overlay adds to the base, and nothing else: the runtime's
// socket folder, read-only, and the flag naming the socket in it.
const (
	runtimeDir  = "/run/containerd"
	runtimeFlag = "--container-runtime-endpoint=unix:///run/containerd/containerd.sock"
)

// runtimeAccess finds in ds what would let podwatch reach a container
// runtime: a hostPath volume under /run or /var/run, its mount, the flag.
func runtimeAccess(ds *appsv1.DaemonSet) (*v1.Volume, *v1.VolumeMount, string) {
	var vol *v1.Volume
	var mount *v1.VolumeMount
	var flag string
	spec := &ds.Spec.Template.Spec
	for i, v := range spec.Volumes {
		if hp := v.HostPath; hp != nil && (strings.HasPrefix(hp.Path, "/run/") || strings.HasPrefix(hp.Path, "/var/run/")) {
			vol = &spec.Volumes[i]
		}
	}
	for _, c := range spec.Containers {
		for i, m := range c.VolumeMounts {
			if vol != nil && m.Name == vol.Name {
				mount = &c.VolumeMounts[i]
			}
		}
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--container-runtime-endpoint") || strings.HasPrefix(a, "--follow-pods") {
				flag = a
			}
		}
	}
	return vol, mount, flag
}

// servedDaemonSet is the podwatch DaemonSet as the API server stores it.
func servedDaemonSet(ctx context.Context, t *testing.T, s *apiserver.Server) *appsv1.DaemonSet {
	t.Helper()
	out, err := s.Kubectl(ctx, apiserver.AdminToken, "get", "daemonset", "podwatch", "-n", "podwatch", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("kubectl get daemonset: %v\n%s", err, out)
	}
	return &ds
}

// kustomizedDaemonSet is the podwatch DaemonSet that kubectl kustomize
// builds from dir, parsed strictly.
func kustomizedDaemonSet(ctx context.Context, t *testing.T, s *apiserver.Server, dir string) *appsv1.DaemonSet {
	t.Helper()
	out, err := s.Kubectl(ctx, apiserver.AdminToken, "kustomize", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(out, "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("kubectl kustomize %s: %v", dir, err)
		}
		if tm.Kind != "DaemonSet" {
			continue
		}
		var ds appsv1.DaemonSet
		if err := yaml.UnmarshalStrict([]byte(doc), &ds); err != nil {
			t.Fatalf("kubectl kustomize %s: DaemonSet: %v", dir, err)
		}
		return &ds
	}
	t.Fatalf("kubectl kustomize %s: no DaemonSet in\n%s", dir, out)
	return nil
}

// The opt-in to following changes (docs/following.md), as an operator
// installs it with the real kubectl on a fresh API server: every object of
// the base, and a DaemonSet that mounts the runtime's socket folder
// read-only and passes the flag. The overlay must differ from the base by
// those three things alone: in particular the securityContext stays the
// base's (uid 0, which owns containerd's root:root 0660 socket; only
// DAC_READ_SEARCH), so the runtime access adds no capability.
func TestKubectlApplyFollowOverlay(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	ctx := context.Background()
	out, err := s.Kubectl(ctx, apiserver.AdminToken, "apply", "-k", followDir)
	if err != nil {
		t.Fatalf("kubectl apply -k %s on a fresh cluster: %v\n%s", followDir, err, out)
	}
	t.Logf("kubectl apply -k %s:\n%s", followDir, out)
	for _, o := range deployObjects(t) {
		args := []string{"get", o.kind, o.name, "-o", "jsonpath={.metadata.name}"}
		if o.namespace != "" {
			args = append(args, "-n", o.namespace)
		}
		if got, err := s.Kubectl(ctx, apiserver.AdminToken, args...); err != nil || got != o.name {
			t.Errorf("after kubectl apply -k %s: %s %s/%s: got %q, %v", followDir, o.kind, o.namespace, o.name, got, err)
		}
	}

	served := servedDaemonSet(ctx, t, s)
	vol, mount, flag := runtimeAccess(served)
	switch {
	case vol == nil:
		t.Fatalf("the served DaemonSet has no hostPath volume under /run: %+v", served.Spec.Template.Spec.Volumes)
	case vol.HostPath.Path != runtimeDir || vol.HostPath.Type == nil || *vol.HostPath.Type != v1.HostPathDirectory:
		// The folder, not the socket: a hostPath of the socket file keeps
		// the inode containerd deletes when it restarts.
		t.Errorf("runtime volume = %+v, want the folder %s, type Directory", vol.HostPath, runtimeDir)
	case mount == nil:
		t.Errorf("volume %s is mounted in no container", vol.Name)
	case mount.MountPath != runtimeDir || !mount.ReadOnly:
		t.Errorf("runtime mount = %+v, want %s read-only", mount, runtimeDir)
	}
	if flag != runtimeFlag {
		t.Errorf("runtime flag = %q, want %q", flag, runtimeFlag)
	}
	if sock := strings.TrimPrefix(runtimeFlag, "--container-runtime-endpoint=unix://"); filepath.Dir(sock) != runtimeDir {
		t.Errorf("the flag's socket %s is not in the mounted folder %s", sock, runtimeDir)
	}

	// Nothing else: take the three additions out of the overlay's build and
	// it must be the base's, field for field.
	base := kustomizedDaemonSet(ctx, t, s, deployDir)
	follow := kustomizedDaemonSet(ctx, t, s, followDir)
	spec := &follow.Spec.Template.Spec
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v v1.Volume) bool { return v.Name == vol.Name })
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.Name == vol.Name })
		c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return a == runtimeFlag })
	}
	if !apiequality.Semantic.DeepEqual(base, follow) {
		b, _ := yaml.Marshal(base)
		f, _ := yaml.Marshal(follow)
		t.Errorf("the overlay changes more than the runtime volume, mount and flag:\nbase:\n%s\noverlay without them:\n%s", b, f)
	}
}
