package kube

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Client defaults. An agent runs on every node, so the per-node budget is
// small: pkg/events already bounds writes; these bound the client itself
// (including mirror pod reads and retries inside client-go).
const (
	DefaultQPS   = 5
	DefaultBurst = 10
)

// Options select the cluster and bound the API client.
type Options struct {
	// Kubeconfig is a kubeconfig file. Empty: in-cluster config when
	// KUBERNETES_SERVICE_HOST is set, otherwise no API sink.
	Kubeconfig string
	// QPS and Burst bound the client's requests (client-go's token bucket).
	QPS   float32
	Burst int
}

// AddFlags registers --kubeconfig, --kube-api-qps and --kube-api-burst with
// the current values (or the defaults for zero values) as defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.setDefaults()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"kubeconfig of the cluster to send Events to; empty: in-cluster config when $KUBERNETES_SERVICE_HOST is set, otherwise Events go to stdout and the local store only")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "sustained requests per second to the Kubernetes API")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "requests to the Kubernetes API allowed in a burst above --kube-api-qps")
}

func (o *Options) setDefaults() {
	if o.QPS == 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
}

// Validate reports options Config would reject. Zero QPS and Burst mean the
// defaults.
func (o Options) Validate() error {
	var errs []error
	if o.QPS < 0 || math.IsNaN(float64(o.QPS)) || math.IsInf(float64(o.QPS), 0) {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be a finite, non-negative number, got %v", o.QPS))
	}
	if o.Burst < 0 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must not be negative, got %d", o.Burst))
	}
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			errs = append(errs, fmt.Errorf("--kubeconfig: %w", err))
		}
	}
	return errors.Join(errs...)
}

// clusterSource is where Config takes the cluster from.
type clusterSource int

const (
	noCluster clusterSource = iota
	fromKubeconfig
	inCluster
)

func (o Options) source(getenv func(string) string) clusterSource {
	switch {
	case o.Kubeconfig != "":
		return fromKubeconfig
	case getenv("KUBERNETES_SERVICE_HOST") != "":
		return inCluster
	}
	return noCluster
}

// Source says where Config takes the cluster from, for the logs: the
// kubeconfig file, "in-cluster", or "" for none.
func (o Options) Source(getenv func(string) string) string {
	switch o.source(getenv) {
	case fromKubeconfig:
		return o.Kubeconfig
	case inCluster:
		return "in-cluster"
	}
	return ""
}

// Config returns the client config the options select, or nil and no error
// when no cluster is configured (no --kubeconfig and not in a pod). getenv
// is os.Getenv outside tests.
func (o Options) Config(getenv func(string) string) (*rest.Config, error) {
	o.setDefaults()
	var cfg *rest.Config
	var err error
	switch o.source(getenv) {
	case noCluster:
		return nil, nil
	case inCluster:
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config: %w", err)
		}
	default:
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
		}
	}
	cfg.QPS = o.QPS
	cfg.Burst = o.Burst
	cfg.UserAgent = userAgent
	return cfg, nil
}
