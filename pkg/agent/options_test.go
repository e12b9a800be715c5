package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompleteDerivesTheNodeName(t *testing.T) {
	flags := filepath.Join(t.TempDir(), "kubeadm-flags.env")
	if err := os.WriteFile(flags, []byte(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --hostname-override=CP1"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	none := func(string) bool { return false }
	for _, tt := range []struct {
		name    string
		node    string
		kubeadm string
		changed func(string) bool
		want    string
	}{
		{"lowercased and trimmed", " CP1\n", "", none, "cp1"},
		{"kubeadm's override wins over the default", "host-a", flags, none, "cp1"},
		{"an explicit --node-name wins over kubeadm's", "Explicit", flags, func(f string) bool { return f == "node-name" }, "explicit"},
		{"a missing flags file is skipped", "host-a", filepath.Join(t.TempDir(), "missing"), none, "host-a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.NodeName, o.KubeadmFlags = tt.node, tt.kubeadm
			if err := o.Complete(tt.changed); err != nil {
				t.Fatal(err)
			}
			if o.NodeName != tt.want {
				t.Fatalf("node %q, want %q", o.NodeName, tt.want)
			}
			o.Source.Path = t.TempDir()
			if err := o.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

// A name the kubelet could not have stops the agent at start with check's
// message, instead of every manifest turning invalid.
func TestValidateRejectsAnInvalidNodeName(t *testing.T) {
	o := DefaultOptions()
	o.NodeName = "node_1"
	o.Source.Path = t.TempDir()
	if err := o.Complete(func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), `--node-name: node name "node_1": a lowercase RFC 1123 subdomain`) {
		t.Fatalf("Validate = %v", err)
	}
	o.NodeName = "Upper" // Complete skipped
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "call Complete") {
		t.Fatalf("Validate of an underived name = %v", err)
	}
}
