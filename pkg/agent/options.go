package agent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/pkg/kubeletconfig"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/source/file"
)

// Defaults of the agent's own options.
const (
	DefaultStateDir        = "/var/lib/podwatch"
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configure the agent: its components' options and its own.
type Options struct {
	Metrics  metrics.Options
	Source   file.Options
	Events   events.Options
	Kube     kube.Options
	NodeName string // default $NODE_NAME, then the lowercased hostname
	Output   string // text (default) or json
	StateDir string // default /var/lib/podwatch
	// ShutdownTimeout bounds the flush of pending event writes on SIGTERM.
	// Default 10s; the systemd unit's TimeoutStopSec sits a little above.
	ShutdownTimeout time.Duration
	// KubeletConfig is a KubeletConfiguration file whose staticPodPath and
	// fileCheckFrequency apply unless --path or --file-check-frequency are given.
	KubeletConfig string
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
		NodeName:        DefaultNodeName(),
		Output:          events.OutputText,
		StateDir:        DefaultStateDir,
		ShutdownTimeout: DefaultShutdownTimeout,
	}
}

// DefaultNodeName is $NODE_NAME, else the lowercased hostname, else empty.
func DefaultNodeName() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return strings.ToLower(h)
}

// AddFlags registers the agent's flags, its components' included.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Source.AddFlags(fs)
	o.Events.AddFlags(fs)
	o.Kube.AddFlags(fs)
	o.Metrics.AddFlags(fs)
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Name of this node, appended to static pod names as the kubelet does; taken from $NODE_NAME, else the lowercased hostname.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Format of the events printed on stdout: text, or json (one v1 Event per line).")
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "Folder for podwatch's state: the published pods and the local event store. When it cannot be used, podwatch runs in memory.")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "On SIGTERM or SIGINT, how long to flush pending event writes before exiting.")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", o.KubeletConfig, "The kubelet's config file (e.g. /var/lib/kubelet/config.yaml): its staticPodPath and fileCheckFrequency apply unless --path or --file-check-frequency are given.")
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
