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
	"time"

	"golang.org/x/sys/unix"
)

// hostDirs are the folders a kubelet left alone creates on the host, each
// given by the top that may be new: its root dir (cert dir, plugin,
// plugin registration, pod-resources, checkpoint and device-plugin dirs
// within), the pod and container log folders, the FlexVolume plugin dir
// (/usr/libexec/kubernetes/kubelet-plugins/volume/exec, made by its prober
// at start) and /etc/kubernetes, where kubeadm's manifests put their
// hostPath volumes of type DirectoryOrCreate and FileOrCreate.
func hostDirs() []string {
	return []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/usr/libexec/kubernetes", "/etc/kubernetes"}
}

// HostState is what of the host the kubelet would change if it were not
// isolated: the six sysctls it sets and the folders it creates.
type HostState map[string]string

// ReadHost records the sysctls' values, and for each of the kubelet's
// folders either "absent" or a listing of what is in it (path, mode, size).
func ReadHost() (HostState, error) {
	return readHost("/")
}

// readHost is ReadHost with the folders taken under root.
func readHost(root string) (HostState, error) {
	s := HostState{}
	for name := range Sysctls() {
		b, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err != nil {
			return nil, err
		}
		s["sysctl "+name] = strings.TrimSpace(string(b))
	}
	for _, d := range hostDirs() {
		l, err := listing(filepath.Join(root, d))
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

// FSNow is the file system's time now, as it stamps a file made in dir:
// its clock is coarser than time.Now, and may lag it by a tick.
func FSNow(dir string) (time.Time, error) {
	f, err := os.CreateTemp(dir, ".fsnow-")
	if err != nil {
		return time.Time{}, err
	}
	f.Close()
	defer os.Remove(f.Name())
	return birth(f.Name())
}

func birth(path string) (time.Time, error) {
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &sx); err != nil {
		return time.Time{}, &fs.PathError{Op: "statx", Path: path, Err: err}
	}
	if sx.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}, fmt.Errorf("%s: its file system keeps no birth time", path)
	}
	return time.Unix(sx.Btime.Sec, int64(sx.Btime.Nsec)), nil
}

// CreatedSince names, for each path, the first of it and its ancestors
// born after t (a time from FSNow): what a MkdirAll (a hostPath volume of type
// DirectoryOrCreate) or a create (FileOrCreate) made of it since then.
// Paths are checked by birth time because they become known only from the
// manifests the kubelet reads, after it may have created them.
func CreatedSince(paths []string, t time.Time) ([]string, error) {
	var created []string
	for _, p := range paths {
		c, err := createdSince(p, t)
		if err != nil {
			return nil, err
		}
		if c != "" && !slices.Contains(created, c) {
			created = append(created, c)
		}
	}
	slices.Sort(created)
	return created, nil
}

func createdSince(path string, t time.Time) (string, error) {
	var chain []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		chain = append(chain, p)
		if p == "/" || p == "." {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		born, err := birth(chain[i])
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if born.After(t) {
			return chain[i], nil
		}
	}
	return "", nil
}
