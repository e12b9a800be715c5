package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/follow"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/pkg/kubeletconfig"
	"github.com/podwatch/podwatch/pkg/manifest"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/source/file"
	"github.com/podwatch/podwatch/pkg/source/relist"
)

// FlagRuntimeEndpoint names the flag that --follow-pods stands in for.
const FlagRuntimeEndpoint = "container-runtime-endpoint"

// Defaults of the agent's own options.
const (
	DefaultStateDir        = "/var/lib/podwatch"
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configure the agent: its components' options and its own.
type Options struct {
	Metrics metrics.Options
	Source  file.Options
	// Relist is the detector of the kubelet's relist; its Path is the
	// file source's.
	Relist relist.Options
	Events events.Options
	Kube   kube.Options
	Follow follow.Options
	// RuntimeEndpoint is the container runtime's CRI socket, through
	// which each change is followed to the pod the kubelet runs; empty:
	// not followed. Access to it is root-equivalent, so it is never taken
	// by default: only when given, or with FollowPods from the kubelet
	// config.
	RuntimeEndpoint string
	// FollowPods takes RuntimeEndpoint from KubeletConfig's
	// containerRuntimeEndpoint unless --container-runtime-endpoint is
	// given.
	FollowPods bool
	// NodeName is the node's name as the kubelet derives it: --node-name,
	// else the --hostname-override in KubeadmFlags, else $NODE_NAME, else
	// the hostname; trimmed and lowercased by Complete.
	NodeName string
	// PodName is the pod podwatch runs in, if any ($POD_NAME, which the
	// DaemonSet sets; the command reads it). The state dir's lock names it,
	// so that a second podwatch can say which one holds the folder.
	PodName  string
	Output   string // text (default) or json
	StateDir string // default /var/lib/podwatch
	// ShutdownTimeout bounds the flush of pending event writes on SIGTERM.
	// Default 10s; the systemd unit's TimeoutStopSec sits a little above.
	ShutdownTimeout time.Duration
	// KubeletConfig is a KubeletConfiguration file whose staticPodPath and
	// fileCheckFrequency apply unless --path or --file-check-frequency are given.
	KubeletConfig string
	// KubeadmFlags is kubeadm's kubelet flags file, whose --hostname-override
	// names the node unless --node-name is given; a missing file is skipped.
	KubeadmFlags string
	// StaticPodsDisabled is set when KubeletConfig turns static pods off: the
	// agent then stays up and idle instead of watching a folder the kubelet
	// ignores (exiting would crash-loop under systemd and in a DaemonSet).
	StaticPodsDisabled bool

	// OnMetricsListen, when set, is called once with the bound metrics
	// address (nil when the server is off), before any work starts; tests
	// bind port 0 and learn the port through it.
	OnMetricsListen func(net.Addr)
}

// DefaultOptions are the agent's defaults; NodeName comes from the
// environment (DefaultNodeName).
func DefaultOptions() Options {
	return Options{
		Metrics:         metrics.DefaultOptions(),
		Relist:          relist.DefaultOptions(),
		Follow:          follow.Options{MinRunning: follow.DefaultMinRunning},
		NodeName:        DefaultNodeName(),
		Output:          events.OutputText,
		StateDir:        DefaultStateDir,
		ShutdownTimeout: DefaultShutdownTimeout,
	}
}

// DefaultNodeName is $NODE_NAME, else the hostname, else empty; as given,
// for manifest.NodeName to derive the kubelet's name from.
func DefaultNodeName() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// AddFlags registers the agent's flags, its components' included.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Source.AddFlags(fs)
	o.Relist.AddFlags(fs)
	o.Events.AddFlags(fs)
	o.Kube.AddFlags(fs)
	o.Metrics.AddFlags(fs)
	o.Follow.AddFlags(fs)
	fs.StringVar(&o.RuntimeEndpoint, FlagRuntimeEndpoint, o.RuntimeEndpoint, "The container runtime's CRI socket (e.g. unix:///run/containerd/containerd.sock): follow each change to the pod the kubelet runs and report StaticPodStarted, StaticPodNotStarted and the others. Access to it is root-equivalent; empty: the socket --follow-pods takes, else changes are followed through the mirror pods alone when there is an API server.")
	fs.BoolVar(&o.FollowPods, "follow-pods", o.FollowPods, "Follow each change to the pod the kubelet runs through the CRI socket --kubelet-config names (containerRuntimeEndpoint, the kubelet's default when unset); an explicit --container-runtime-endpoint wins.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Name of this node, appended to static pod names as the kubelet does; taken from --kubeadm-flags-file's --hostname-override, else $NODE_NAME, else the hostname; trimmed and lowercased as the kubelet does.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Format of the events printed on stdout: text (every change; a problem that only repeats again at most every --event-text-repeat-interval), or json (one v1 Event per line, every occurrence).")
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "Folder for podwatch's state: the published pods and the local event store. While another podwatch holds it, podwatch stands by; when it can only be read, podwatch runs from it without saving; when it cannot be used at all, in memory.")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "On SIGTERM or SIGINT, how long to flush pending event writes before exiting.")
	fs.StringVar(&o.KubeadmFlags, "kubeadm-flags-file", o.KubeadmFlags, "kubeadm's kubelet flags file (e.g. /var/lib/kubelet/kubeadm-flags.env): its --hostname-override names the node unless --node-name is given. A missing file is skipped.")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", o.KubeletConfig, "The kubelet's config file (e.g. /var/lib/kubelet/config.yaml): its staticPodPath and fileCheckFrequency apply unless --path or --file-check-frequency are given.")
}

// Complete fills in what the flags leave to files and derivation: the
// kubelet config's path and period, the node name from kubeadm's flags, and
// the node name trimmed and lowercased as the kubelet does. changed reports
// the flags given explicitly, which win. Validate checks the result.
func (o *Options) Complete(changed func(flag string) bool) error {
	if err := o.ApplyKubeletConfig(changed); err != nil {
		return err
	}
	if o.KubeadmFlags != "" && !changed("node-name") {
		override, err := kubeletconfig.HostnameOverride(o.KubeadmFlags)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("--kubeadm-flags-file: %w", err)
		case override != "":
			o.NodeName = override
		}
	}
	if n, err := manifest.NodeName(o.NodeName); err == nil {
		o.NodeName = n
	}
	return nil
}

// ApplyKubeletConfig reads KubeletConfig, if set, into the options; changed
// reports the flags given explicitly, which win.
func (o *Options) ApplyKubeletConfig(changed func(flag string) bool) error {
	if o.KubeletConfig == "" {
		return nil
	}
	cfg, err := kubeletconfig.Load(o.KubeletConfig)
	if err != nil {
		return err
	}
	if o.FollowPods && !changed(FlagRuntimeEndpoint) {
		o.RuntimeEndpoint = cfg.ContainerRuntimeEndpoint
	}
	err = kubeletconfig.Apply(cfg, changed, &o.Source.Path, &o.Source.FileCheckFrequency)
	if errors.Is(err, kubeletconfig.ErrStaticPodsDisabled) {
		o.StaticPodsDisabled = true
		return nil
	}
	return err
}

// Validate checks every option, its components' included, and reports all
// that are wrong at once.
func (o *Options) Validate() error {
	var errs []error
	src := o.Source
	src.NodeName = o.NodeName
	if err := src.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name is empty and neither $NODE_NAME nor the hostname gave one"))
	} else if n, err := manifest.NodeName(o.NodeName); err != nil {
		errs = append(errs, fmt.Errorf("--node-name: %w", err))
	} else if n != o.NodeName {
		errs = append(errs, fmt.Errorf("--node-name %q: not as the kubelet derives it (%q): call Complete", o.NodeName, n))
	}
	if err := o.Relist.Validate(); err != nil {
		errs = append(errs, err)
	}
	ev := o.Events
	ev.Host = o.NodeName
	if err := ev.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Metrics.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Kube.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Follow.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.RuntimeEndpoint != "" {
		if _, err := cri.SocketPath(o.RuntimeEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", FlagRuntimeEndpoint, err))
		}
	} else if o.FollowPods {
		errs = append(errs, fmt.Errorf("--follow-pods takes the CRI socket from --kubelet-config: give one, or --%s", FlagRuntimeEndpoint))
	}
	if o.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--shutdown-timeout must be positive, got %v", o.ShutdownTimeout))
	}
	if o.Output != events.OutputText && o.Output != events.OutputJSON {
		errs = append(errs, fmt.Errorf("--output %q: want text or json", o.Output))
	}
	if o.StateDir == "" {
		errs = append(errs, errors.New("--state-dir is empty"))
	}
	return errors.Join(errs...)
}
