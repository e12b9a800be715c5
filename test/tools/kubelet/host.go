//go:build linux

package kubelet

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hostDirs are the folders a kubelet left alone creates on the host: its
// root dir and the pod and container log folders.
func hostDirs() []string {
	return []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers"}
}

// HostState is what of the host the kubelet would change if it were not
// isolated: the six sysctls it sets and the folders it creates.
type HostState map[string]string

// ReadHost records the sysctls' values, and for each of the kubelet's
// folders either "absent" or a listing of what is in it (path, mode, size).
func ReadHost() (HostState, error) {
	s := HostState{}
	for name := range Sysctls() {
		b, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err != nil {
			return nil, err
		}
		s["sysctl "+name] = strings.TrimSpace(string(b))
	}
	for _, d := range hostDirs() {
		l, err := listing(d)
		if err != nil {
			return nil, err
		}
		s["dir "+d] = l
	}
	return s, nil
}

func listing(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, fi.Mode(), fi.Size())
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	return b.String(), err
}

// Diff describes how now differs from s, empty when it does not.
func (s HostState) Diff(now HostState) string {
	var b strings.Builder
	keys := slices.Sorted(maps.Keys(s))
	for k := range maps.Keys(now) {
		if _, ok := s[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if s[k] != now[k] {
			fmt.Fprintf(&b, "%s: was %q, now %q\n", k, s[k], now[k])
		}
	}
	return b.String()
}
