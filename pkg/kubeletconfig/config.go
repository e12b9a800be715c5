package kubeletconfig

import (
	"errors"
	"time"
)

// The kubelet's values for what this package reads, named here so that a
// file and podwatch's flags can be told apart from the kubelet's defaults.
const (
	// APIVersion and Kind are the only type the kubelet decodes from its
	// config file.
	APIVersion = "kubelet.config.k8s.io/v1beta1"
	Kind       = "KubeletConfiguration"
	// DefaultFileCheckFrequency is the kubelet's when the file sets none (or 0s).
	DefaultFileCheckFrequency = 20 * time.Second
	// DefaultContainerRuntimeEndpoint is the kubelet's when the file sets
	// none.
	DefaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"
)

// Names of podwatch's flags that a config file stands in for, as Apply asks
// about them.
const (
	FlagPath               = "path"
	FlagFileCheckFrequency = "file-check-frequency"
)

var (
	// ErrRead: the file could not be read, or is empty (the kubelet refuses
	// an empty config file too).
	ErrRead = errors.New("kubeletconfig: cannot read kubelet config")
	// ErrDecode: the file is not valid YAML or JSON, or a field podwatch
	// uses has a value of the wrong type.
	ErrDecode = errors.New("kubeletconfig: cannot decode kubelet config")
	// ErrNotKubeletConfig: apiVersion or kind is missing or not
	// kubelet.config.k8s.io/v1beta1 KubeletConfiguration.
	ErrNotKubeletConfig = errors.New("kubeletconfig: not a " + APIVersion + " " + Kind)
	// ErrInvalid: a value decodes but the kubelet could not use it sensibly.
	ErrInvalid = errors.New("kubeletconfig: invalid kubelet config")
	// ErrStaticPodsDisabled: the file has no staticPodPath, so the kubelet
	// runs no static pods and there is nothing to watch unless --path says
	// otherwise.
	ErrStaticPodsDisabled = errors.New("kubeletconfig: staticPodPath is empty: the kubelet runs no static pods")
)

// Config is what the kubelet takes from its config file for static pods.
type Config struct {
	// File is the absolute path of the config file: relative paths in it
	// were resolved against its folder, and errors name it.
	File string
	// StaticPodPath is absolute, or empty when static pods are off.
	StaticPodPath string
	// FileCheckFrequency is the kubelet's relist period: the file's value,
	// else DefaultFileCheckFrequency.
	FileCheckFrequency time.Duration
	// ContainerRuntimeEndpoint is the CRI socket the kubelet uses: the
	// file's value, else DefaultContainerRuntimeEndpoint.
	ContainerRuntimeEndpoint string
	// Set tells which fields the file wrote, so a caller can say where a
	// value came from.
	Set Fields
}

// Fields flags the fields present in the file. staticPodPath: null counts as
// absent, as it does for the kubelet (fileCheckFrequency: null fails to decode
// for both).
type Fields struct {
	StaticPodPath      bool
	FileCheckFrequency bool
}

// StaticPodsDisabled reports that the kubelet runs no static pods from a file
// source: staticPodPath is absent or empty.
func (c Config) StaticPodsDisabled() bool { return c.StaticPodPath == "" }
