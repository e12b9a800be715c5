//go:build linux

package kubelet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// mirrorLimit is how long after a write the mirror pod may take to say
// the change runs: the kubelet creates the new mirror pod 13-16 s after
// an edit, then its containers must stay up --follow-min-running.
const mirrorLimit = 45 * time.Second

// TestFollowerThroughTheMirrorPodAlone runs the kubelet against a real API
// server and podwatch beside it as the base DaemonSet does: a kubeconfig
// with the RBAC of deploy/kubernetes, and no container runtime endpoint.
// It must follow through the mirror pods alone: StaticPodStarted for an
// add and for an edit that gives the pod a new UID, StaticPodStopped for
// a delete, and say at start that it follows through the mirror pods.
func TestFollowerThroughTheMirrorPodAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real kubelet and kube-apiserver for about a minute")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, podwatchConfig, kubeletConfig := cluster(ctx, t, followNamespace)
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: followNode, Kubeconfig: kubeletConfig})
	pw := startFollower(ctx, t, k.Manifests, k.CRISocket, func(o *agent.Options) {
		o.RuntimeEndpoint = ""
		o.Kube.Kubeconfig = podwatchConfig
	})
	if logs := pw.logs.String(); !strings.Contains(logs, "following changes to the running pods through the mirror pods alone") {
		t.Errorf("the start log does not say the mirror pods are followed:\n%s", logs)
	}

	var figures []string
	wrote := pw.write(t, k, "mirrored", "registry.example/app:1")
	ev := pw.await(ctx, t, "mirrored", types.ReasonStarted, wrote, mirrorLimit, "mirrored-"+followNode+" runs the change from mirrored.yaml ")
	figures = append(figures, "add: write to StaticPodStarted "+ev.at.Sub(wrote).Round(time.Millisecond).String()+" ("+took(ev)+" in its message)")

	wrote = pw.write(t, k, "mirrored", "registry.example/app:2")
	ev = pw.await(ctx, t, "mirrored", types.ReasonStarted, wrote, mirrorLimit, "mirrored-"+followNode+" runs the change from mirrored.yaml ")
	figures = append(figures, "edit: write to StaticPodStarted "+ev.at.Sub(wrote).Round(time.Millisecond).String()+" ("+took(ev)+" in its message)")

	removed := time.Now()
	if err := os.Remove(filepath.Join(k.Manifests, "mirrored.yaml")); err != nil {
		t.Fatal(err)
	}
	ev = pw.await(ctx, t, "mirrored", types.ReasonStopped, removed, mirrorLimit, "mirrored-"+followNode+" is stopped ")
	figures = append(figures, "delete: remove to StaticPodStopped "+ev.at.Sub(removed).Round(time.Millisecond).String())

	for _, reason := range []string{types.ReasonNotStarted, types.ReasonNotStopped, types.ReasonRestarting} {
		if l, ok := pw.first("mirrored", reason, time.Time{}); ok {
			t.Errorf("podwatch said %s: %s", reason, l.ev.Message)
		}
	}
	if t.Failed() {
		t.Logf("podwatch printed:\n%s", pw.dump())
		return
	}
	t.Logf("through the mirror pod alone, measured:\n  %s", strings.Join(figures, "\n  "))
}
