package differential

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// portStep is one change of the folder in TestPortAgreesWithTheKubelet.
type portStep struct {
	what string
	do   func(dir string) error
}

func podYAML(name, image, uid string) []byte {
	meta := "  name: " + name + "\n"
	if uid != "" {
		meta += "  uid: " + uid + "\n"
	}
	return []byte("apiVersion: v1\nkind: Pod\nmetadata:\n" + meta + "spec:\n  containers:\n  - name: c\n    image: " + image + "\n")
}

func installAs(name string, data []byte) func(string) error {
	return func(dir string) error { return install(filepath.Join(dir, name), data) }
}

// TestPortAgreesWithTheKubelet plays changes of a folder to the kubelet's
// own file source and pod config (config.NewSourceFile, NewPodConfig) and
// to podwatch's port of them (pkg/model), on the same folder at once, and
// holds the port to the kubelet: the same PodUpdates, step by step, for
// the same pods, with UIDs that correspond one to one. Its relist period
// is an hour, so that both list only at start and every step reaches them
// on the watch: where a relist falls among events is the timeline's
// business, not the port's.
func TestPortAgreesWithTheKubelet(t *testing.T) {
	const node = "port-node"
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"etcd.yaml":     podYAML("etcd", "etcd:3.6.2", ""),
		"etcd.yaml.bak": podYAML("etcd", "etcd:3.6.1", ""),
		"web.yaml":      podYAML("web", "nginx:1.28", ""),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	steps := []portStep{
		{"the shadowed etcd.yaml written", installAs("etcd.yaml", podYAML("etcd", "etcd:3.6.3", ""))},
		{"chmod of etcd.yaml.bak", func(dir string) error { return os.Chmod(filepath.Join(dir, "etcd.yaml.bak"), 0o644) }},
		{"etcd.yaml written invalid", installAs("etcd.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\nspec:\n  containers:\n  - name: c\n    image: etcd:3.6.3\n    imagePullPolicy: Sometimes\n"))},
		{"etcd.yaml renamed to etcd.yaml.old", func(dir string) error {
			return os.Rename(filepath.Join(dir, "etcd.yaml"), filepath.Join(dir, "etcd.yaml.old"))
		}},
		{"etcd.yaml.old removed", func(dir string) error { return os.Remove(filepath.Join(dir, "etcd.yaml.old")) }},
		{"chmod of etcd.yaml.bak again", func(dir string) error { return os.Chmod(filepath.Join(dir, "etcd.yaml.bak"), 0o600) }},
		{"web.yaml's image changed", installAs("web.yaml", podYAML("web", "nginx:1.29", ""))},
		{"a dot-file written", installAs(".web.yaml.swp", podYAML("swp", "nginx:1.29", ""))},
		{"a folder made", func(dir string) error { return os.Mkdir(filepath.Join(dir, "sub"), 0o755) }},
		{"pinned.yaml with metadata.uid", installAs("pinned.yaml", podYAML("pinned", "busybox:1.36", "fixed-uid"))},
		{"pinned.yaml's image changed", installAs("pinned.yaml", podYAML("pinned", "busybox:1.37", "fixed-uid"))},
		{"pinned.yaml copied to pinned2.yaml", installAs("pinned2.yaml", podYAML("pinned", "busybox:1.37", "fixed-uid"))},
		{"web.yaml removed", func(dir string) error { return os.Remove(filepath.Join(dir, "web.yaml")) }},
		{"etcd.yaml.bak removed", func(dir string) error { return os.Remove(filepath.Join(dir, "etcd.yaml.bak")) }},
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port, err := startPort(dir, node)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); port.serve(ctx) }()
	defer func() { cancel(); <-served }()
	before, err := dirWatches(dir)
	if err != nil {
		t.Fatal(err)
	}
	kube := startKubelet(ctx, dir, node, time.Hour)
	if err := kube.b.await(ctx, waitLimit, "the kubelet's first listing", func() bool { return kube.updates > 0 }, kube.state); err != nil {
		t.Fatal(err)
	}
	if err := awaitWatches(ctx, dir, before); err != nil {
		t.Fatal(err)
	}

	var closing []string
	seq := 0
	settle := func() error {
		for range 2 {
			name := fmt.Sprintf("p%03d", seq)
			seq++
			pod := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: marker\n    image: registry.k8s.io/pause:3.10\n", name, markerNamespace)
			if err := install(filepath.Join(dir, markerFilePrefix+name+".yaml"), []byte(pod)); err != nil {
				return err
			}
			if err := kube.b.await(ctx, waitLimit, "the kubelet adds marker "+name, func() bool { return kube.markers[name] }, kube.state); err != nil {
				return err
			}
			if err := port.b.await(ctx, waitLimit, "the port adds marker "+name, func() bool { return port.markers[name] }, port.state); err != nil {
				return err
			}
			if seq%2 == 0 {
				closing = append(closing, name)
			}
		}
		return nil
	}
	what := []string{"the listing at start"}
	if err := settle(); err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if err := st.do(dir); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if err := settle(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		what = append(what, st.what)
	}

	var kb, pb []batch
	kube.b.read(func() { kb = slices.Clone(kube.batches) })
	port.b.read(func() { pb = slices.Clone(port.batches) })
	kp, pp := byPhase(kb, closing), byPhase(pb, closing)
	uids := map[string]string{} // the kubelet's UID -> the port's
	ports := map[string]string{}
	changes := 0
	for i, w := range what {
		k, p := kp[i], pp[i]
		if len(k) != len(p) {
			t.Errorf("%s: the kubelet sends %v, the port %v", w, k, p)
			continue
		}
		for j := range k {
			if k[j].Op != p[j].Op || k[j].Pod != p[j].Pod {
				t.Errorf("%s: the kubelet sends %v, the port %v", w, k, p)
				break
			}
			changes++
			if u, ok := uids[k[j].UID]; ok && u != p[j].UID {
				t.Errorf("%s: the kubelet's UID %s was the port's %q, now %q", w, k[j].UID, u, p[j].UID)
			}
			if u, ok := ports[p[j].UID]; ok && u != k[j].UID {
				t.Errorf("%s: the port's UID %q was the kubelet's %s, now %s", w, p[j].UID, u, k[j].UID)
			}
			uids[k[j].UID], ports[p[j].UID] = p[j].UID, k[j].UID
		}
	}
	if changes < 10 {
		t.Errorf("the steps made %d pod changes; the test means to hold the port to at least 10", changes)
	}
	t.Logf("%d steps, %d pod changes agreed", len(steps), changes)
}

// byPhase is each phase's ops, each batch's in pod order (the kubelet
// sends the pods of one PodUpdate in map order), a phase ending with the
// batch that adds its closing marker.
func byPhase(batches []batch, closing []string) [][]Op {
	out := make([][]Op, len(closing))
	phase := 0
	for _, bt := range batches {
		ops := slices.Clone(bt.ops)
		slices.SortFunc(ops, func(a, b Op) int { return strings.Compare(a.Pod, b.Pod) })
		if phase < len(out) {
			out[phase] = append(out[phase], ops...)
		}
		for phase < len(closing) && slices.Contains(bt.markers, closing[phase]) {
			phase++
		}
	}
	return out
}
