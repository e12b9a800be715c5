package apiserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
)

// Versions of the binaries; keep them in step with ../go.mod,
// ../etcd/go.mod, ../crictl/go.mod and ../build-binaries.sh.
const (
	KubeVersion   = "v1.37.2"
	EtcdVersion   = "v3.6.16"
	CrictlVersion = "v1.37.0"
)

// Binaries are the paths of the programs.
type Binaries struct {
	KubeAPIServer string
	Etcd          string
	// Kubectl is what operators read podwatch's Events with; the tests
	// run it against the API server to check what they see.
	Kubectl string
}

// CacheDir is where built binaries are kept.
func CacheDir() (string, error) {
	if d := os.Getenv("PODWATCH_BIN_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir() // $XDG_CACHE_HOME, else $HOME/.cache
	if err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	return filepath.Join(d, "podwatch", "bin"), nil
}

// BuildBinaries returns the cached binaries, building what is missing. It
// holds an exclusive lock on the cache while it builds, so test binaries
// running in parallel build once.
func BuildBinaries() (Binaries, error) {
	dir, unlock, err := lockCache()
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	tools, err := toolsDir()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		KubeAPIServer: filepath.Join(dir, "kube-apiserver-"+KubeVersion),
		Etcd:          filepath.Join(dir, "etcd-"+EtcdVersion),
		Kubectl:       filepath.Join(dir, "kubectl-"+KubeVersion),
	}
	if err := goBuild(tools, "k8s.io/kubernetes/cmd/kube-apiserver", b.KubeAPIServer, nil); err != nil {
		return Binaries{}, err
	}
	if err := goBuild(filepath.Join(tools, "etcd"), "go.etcd.io/etcd/server/v3", b.Etcd, nil); err != nil {
		return Binaries{}, err
	}
	if err := goBuild(tools, "k8s.io/kubernetes/cmd/kubectl", b.Kubectl, nil); err != nil {
		return Binaries{}, err
	}
	return b, nil
}

// BuildKubelet returns the cached kubelet, building it if it is missing. It
// is apart from BuildBinaries because only the kubelet suite needs it and a
// cold build takes about eleven minutes on two cores. It is built without
// cgo, static, as Kubernetes releases it.
func BuildKubelet() (string, error) {
	return buildCached(".", "k8s.io/kubernetes/cmd/kubelet", "kubelet-"+KubeVersion, []string{"CGO_ENABLED=0"})
}

// BuildCrictl returns the cached crictl, building it if it is missing. It
// comes from its own module, ../crictl, because cri-tools requires the
// k8s.io staging modules at versions other than the ones ../go.mod pins for
// k8s.io/kubernetes.
func BuildCrictl() (string, error) {
	return buildCached("crictl", "sigs.k8s.io/cri-tools/cmd/crictl", "crictl-"+CrictlVersion, nil)
}

// buildCached builds pkg from the module in module (relative to the tools
// module) into the cache as name, unless it is there, and returns its path.
func buildCached(module, pkg, name string, env []string) (string, error) {
	dir, unlock, err := lockCache()
	if err != nil {
		return "", err
	}
	defer unlock()
	tools, err := toolsDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	if err := goBuild(filepath.Join(tools, module), pkg, out, env); err != nil {
		return "", err
	}
	return out, nil
}

// lockCache creates the cache and holds an exclusive lock on it until
// unlock, so test binaries running in parallel build each binary once.
func lockCache() (dir string, unlock func(), err error) {
	dir, err = CacheDir()
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("cache dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, fmt.Errorf("cache lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", nil, fmt.Errorf("cache lock: %w", err)
	}
	return dir, func() { lock.Close() }, nil
}

// toolsDir is the test/tools module, found from this file's path: tests run
// from source, never from a trimmed build.
func toolsDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the test/tools module")
	}
	return filepath.Dir(filepath.Dir(file)), nil
}

// goBuild builds pkg from the module in dir into out, unless out is there;
// env is added to the go command's environment.
func goBuild(dir, pkg, out string, env []string) error {
	if fi, err := os.Stat(out); err == nil && fi.Mode()&0o111 != 0 {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp.%d", out, os.Getpid())
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", tmp, pkg)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if o, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, o)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("install %s: %w", out, err)
	}
	return nil
}
