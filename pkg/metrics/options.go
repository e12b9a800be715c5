package metrics

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"
)

// DefaultPort is podwatch's metrics port. The Kubernetes node and control
// plane use 2379-2380, 6443 and 10248-10259 (kubelet, kube-proxy,
// controller managers, scheduler); Prometheus' exporter range 9100-9999 is
// fully allocated; NodePorts take 30000-32767 and Linux ephemeral ports
// start at 32768; node-problem-detector uses 20256-20257. 10288 sits clear
// of all of them.
const DefaultPort = 10288

// DefaultBindAddress is loopback only: a node agent should not open a port
// to the network unless asked (a DaemonSet with hostNetwork, or Prometheus
// on the node, can ask for more).
const DefaultBindAddress = "127.0.0.1:10288"

// Disabled is the bind address that turns the server off.
const Disabled = "0"

// ErrBindAddress is returned by Validate for an unusable
// --metrics-bind-address.
var ErrBindAddress = errors.New("metrics: invalid --metrics-bind-address")

// Options configure the metrics server.
type Options struct {
	// BindAddress is host:port to serve on; default DefaultBindAddress,
	// Disabled ("0") serves nothing. Port 0 picks a free port (tests).
	BindAddress string
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options { return Options{BindAddress: DefaultBindAddress} }

// AddFlags registers --metrics-bind-address.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	if o.BindAddress == "" {
		o.BindAddress = DefaultBindAddress
	}
	fs.StringVar(&o.BindAddress, "metrics-bind-address", o.BindAddress,
		"Address (host:port) serving /metrics, /healthz and /readyz; port 0 picks a free port, and 0 alone disables the server.")
}

// Enabled reports whether a server should run.
func (o Options) Enabled() bool { return o.BindAddress != Disabled }

// Validate checks the bind address is host:port with a numeric port.
func (o Options) Validate() error {
	if !o.Enabled() {
		return nil
	}
	if o.BindAddress == "" {
		return fmt.Errorf("%w: empty (use %q to disable)", ErrBindAddress, Disabled)
	}
	_, port, err := net.SplitHostPort(o.BindAddress)
	if err != nil {
		return fmt.Errorf("%w %q: %w", ErrBindAddress, o.BindAddress, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%w %q: port must be a number from 0 to 65535", ErrBindAddress, o.BindAddress)
	}
	return nil
}
