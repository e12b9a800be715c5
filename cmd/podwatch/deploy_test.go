package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The systemd unit's ExecStart must name only flags the agent has: a
// renamed flag would crash-loop every node that installed the package. So
// must the PODWATCH_ARGS the docs tell admins to write in /etc/default/podwatch
// (the packaged file's examples, the follow drop-in's step).
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
	extras := map[string]string{"none": ""}
	for _, f := range []string{"../../hack/package/files/default", "../../deploy/systemd/podwatch.service.d/follow.conf"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimLeft(line, "# "), "PODWATCH_ARGS="); ok {
				extras[fmt.Sprintf("%s:%d", f, i+1)] = strings.Trim(v, `"`)
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s has no PODWATCH_ARGS example", f)
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for where, extra := range extras {
		var run []string
		for _, a := range args {
			if a == "$PODWATCH_ARGS" {
				// --help parses every flag before it, then exits 0.
				run = append(run, strings.Fields(extra)...)
				a = "--help"
			}
			run = append(run, a)
		}
		var out strings.Builder
		if code := realMain(run, &out, devnull); code != 0 {
			t.Errorf("%s: podwatch %s: exit %d", where, strings.Join(run, " "), code)
		}
	}
}

// The DaemonSet's args, and those the follow overlay appends, must be flags
// the agent has, for the same reason.
func TestDaemonSetFlagsParse(t *testing.T) {
	ds := readDaemonSet(t)
	var base []string
	for _, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == "podwatch" {
			base = c.Args
		}
	}
	if len(base) == 0 {
		t.Fatal("no podwatch container with args in the DaemonSet")
	}

	data, err := os.ReadFile("../../deploy/kubernetes-follow/Kustomization")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Patches []struct {
			Patch string `json:"patch"`
		} `json:"patches"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("deploy/kubernetes-follow/Kustomization: %v", err)
	}
	var added []string
	for _, p := range k.Patches {
		var ops []struct {
			Op    string          `json:"op"`
			Path  string          `json:"path"`
			Value json.RawMessage `json:"value"`
		}
		if err := yaml.Unmarshal([]byte(p.Patch), &ops); err != nil {
			t.Fatalf("deploy/kubernetes-follow/Kustomization patch: %v", err)
		}
		for _, op := range ops {
			if op.Op == "add" && strings.HasSuffix(op.Path, "/args/-") {
				var a string
				if err := json.Unmarshal(op.Value, &a); err != nil {
					t.Fatalf("arg %s: %v", op.Value, err)
				}
				added = append(added, a)
			}
		}
	}
	if len(added) == 0 {
		t.Fatal("the follow overlay adds no args")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for name, args := range map[string][]string{"base": base, "follow": append(slices.Clip(base), added...)} {
		if code := realMain(append(slices.Clip(args), "--help"), io.Discard, devnull); code != 0 {
			t.Errorf("%s: podwatch %s: exit %d", name, strings.Join(args, " "), code)
		}
	}
}

// The DaemonSet's image is imported on each node (make image, ctr import),
// not pulled: a pull policy left out defaults to Always for a :latest or
// untagged image, and the pull then fails. The policy must be written out,
// and not Always, for an image named without a registry.
func TestDaemonSetPullPolicyExplicit(t *testing.T) {
	ds := readDaemonSet(t)
	cs := append(slices.Clip(ds.Spec.Template.Spec.InitContainers), ds.Spec.Template.Spec.Containers...)
	if len(cs) == 0 {
		t.Fatal("no containers in the DaemonSet")
	}
	for _, c := range cs {
		if c.ImagePullPolicy == "" {
			t.Errorf("container %s (image %s): no imagePullPolicy; the API server would default it", c.Name, c.Image)
			continue
		}
		if c.ImagePullPolicy == corev1.PullAlways && !fromRegistry(c.Image) {
			t.Errorf("container %s: image %s names no registry but is pulled Always", c.Name, c.Image)
		}
	}
}

// fromRegistry says whether ref names a registry host, as the first part of
// a reference does when it holds a dot or a port or is localhost.
func fromRegistry(ref string) bool {
	host, _, ok := strings.Cut(ref, "/")
	return ok && (strings.ContainsAny(host, ".:") || host == "localhost")
}

// A second podwatch on a state dir names the holder by its pod: the
// DaemonSet gives the pod's name as $POD_NAME, which the command passes on.
func TestDaemonSetNamesItsPod(t *testing.T) {
	ds := readDaemonSet(t)
	found := false
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if c.Name == "podwatch" && e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
				e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
				found = true
			}
		}
	}
	if !found {
		t.Error("the DaemonSet does not set POD_NAME from metadata.name")
	}
	t.Setenv("POD_NAME", "podwatch-x7k2p")
	if got := defaultFlags().Agent.PodName; got != "podwatch-x7k2p" {
		t.Errorf("PodName with $POD_NAME set = %q, want podwatch-x7k2p", got)
	}
}

// readDaemonSet decodes the shipped DaemonSet strictly.
func readDaemonSet(t *testing.T) appsv1.DaemonSet {
	t.Helper()
	data, err := os.ReadFile("../../deploy/kubernetes/20-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(data, &ds); err != nil {
		t.Fatalf("20-daemonset.yaml: %v", err)
	}
	return ds
}
