//go:build linux

package kubelet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// hostPathsOf is what on the host the pod of a manifest may have the
// kubelet create: the path of each hostPath volume (DirectoryOrCreate,
// FileOrCreate), and the subPath of each mount of one, which the kubelet
// makes inside it. Content that is no pod names nothing.
func hostPathsOf(data []byte) []string {
	var pod v1.Pod
	if yaml.Unmarshal(data, &pod) != nil {
		return nil
	}
	vols := map[string]string{}
	var paths []string
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path != "" {
			vols[v.Name] = v.HostPath.Path
			paths = append(paths, v.HostPath.Path)
		}
	}
	var cs []v1.Container
	cs = append(append(cs, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range cs {
		for _, m := range c.VolumeMounts {
			if p, ok := vols[m.Name]; ok && m.SubPath != "" {
				paths = append(paths, filepath.Join(p, m.SubPath))
			}
		}
	}
	return paths
}

// noteHostPaths records the host paths of the manifest at file, read as
// the kubelet reads it.
func (k *Kubelet) noteHostPaths(file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		return // gone again: a later read, or the last scan, has the rest
	}
	paths := hostPathsOf(data)
	if len(paths) == 0 {
		return
	}
	k.hostMu.Lock()
	defer k.hostMu.Unlock()
	for _, p := range paths {
		k.hostPaths[filepath.Clean(p)] = true
	}
}

// HostPaths is every host path named by a hostPath volume of a manifest the
// kubelet read, or that is in its folder now, outside what its mount
// namespace keeps from the host (its tmpfs folders, the run folder).
func (k *Kubelet) HostPaths() []string {
	if es, err := os.ReadDir(k.Manifests); err == nil {
		for _, e := range es {
			if e.Type().IsRegular() {
				k.noteHostPaths(filepath.Join(k.Manifests, e.Name()))
			}
		}
	}
	private := append(strings.Fields(tmpfsDirs), k.dir)
	k.hostMu.Lock()
	defer k.hostMu.Unlock()
	var out []string
	for p := range k.hostPaths {
		if !slices.ContainsFunc(private, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// CreatedOnHost names what of HostPaths, or of their ancestors, was born
// since the kubelet started (see CreatedSince).
func (k *Kubelet) CreatedOnHost() ([]string, error) {
	return CreatedSince(k.HostPaths(), k.started)
}
