package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigSource(t *testing.T) {
	none := func(string) string { return "" }
	inPod := func(k string) string {
		if k == "KUBERNETES_SERVICE_HOST" {
			return "10.0.0.1"
		}
		return ""
	}
	for _, tc := range []struct {
		opts   Options
		getenv func(string) string
		want   string
	}{
		{Options{}, none, ""},
		{Options{}, inPod, "in-cluster"},
		{Options{Kubeconfig: "/etc/podwatch/kubeconfig"}, inPod, "/etc/podwatch/kubeconfig"},
	} {
		if got := tc.opts.Source(tc.getenv); got != tc.want {
			t.Errorf("Source(%+v) = %q, want %q", tc.opts, got, tc.want)
		}
	}
	// With neither, there is no config and no error.
	if cfg, err := (Options{}).Config(none); cfg != nil || err != nil {
		t.Errorf("Config with no cluster = %v, %v; want nil, nil", cfg, err)
	}
	// A kubeconfig that is not there is an error naming it.
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	if _, err := (Options{Kubeconfig: missing}).Config(none); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Config with a missing kubeconfig: %v, want an error naming it", err)
	}
	// In a pod without the service account files, InClusterConfig fails
	// and says so.
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
		t.Skip("this machine has a service account token")
	}
	if _, err := (Options{}).Config(inPod); err == nil || !strings.Contains(err.Error(), "in-cluster config") {
		t.Errorf("Config in a pod without a token: %v, want an in-cluster config error", err)
	}
}
