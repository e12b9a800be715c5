package kubelet_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// A podwatch started with no published state on a folder whose pod the
// real kubelet already runs takes an inventory: the pod is found running,
// since its sandbox's creation, and never said added or started by the
// kubelet, though the kubelet's own file source said ADD for it.
func TestInventoryOfARunningPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: followNode})
	k.Intercept(drive(k))
	const name = "inventory"
	writeManifest(t, k, name, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: main\n    image: registry.example/app:1\n",
		name, followNamespace))
	full := name + "-" + followNode
	// The kubelet runs it, and its sandbox is older than the follower's
	// slack when podwatch starts.
	for {
		sbs := sandboxesOf(k, full)
		if len(sbs) > 0 && len(containersOf(k, full)) > 0 && time.Since(sandboxCreated(k, sbs[0])) > 2*time.Second {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the kubelet did not run %s", full)
		case <-time.After(50 * time.Millisecond): // polling a condition, not waiting for time
		}
	}
	start := time.Now()
	pw := startFollower(ctx, t, k.Manifests, k.CRISocket)
	found := pw.await(ctx, t, name, types.ReasonFound, start, 30*time.Second, "(registry.example/app:1): found running for ")
	t.Logf("found running: %v after start: %s", found.at.Sub(start).Round(time.Millisecond), found.ev.Message)
	for _, reason := range []string{types.ReasonAdded, types.ReasonStarted, types.ReasonNotStarted} {
		if l, ok := pw.first(name, reason, time.Time{}); ok {
			t.Errorf("a pod found running got %s: %s", reason, l.ev.Message)
		}
	}
}

// A podwatch started with no published state while the kubelet has yet
// to start the pod (a boot: its sandbox is held until podwatch runs)
// says the kubelet starts it, and follows it to StaticPodStarted.
func TestInventoryAtBoot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := kubelet.ForTest(ctx, t, kubelet.Config{NodeName: followNode})
	const name = "boot"
	full := name + "-" + followNode
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	driven := drive(k)
	k.Intercept(func(ctx context.Context, method string, req any, call func() (any, error)) (any, error) {
		if r, ok := req.(*runtimeapi.RunPodSandboxRequest); ok && r.GetConfig().GetMetadata().GetName() == full {
			once.Do(func() { close(asked) })
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return driven(ctx, method, req, call)
	})
	wrote := writeManifest(t, k, name, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: main\n    image: registry.example/app:1\n",
		name, followNamespace))
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the kubelet never asked for the sandbox")
	}
	// A file written just before the start waits to settle and is then an
	// ADD (a write at the start): this one is older than that.
	for time.Since(wrote) < time.Second {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond): // polling a condition, not waiting for time
		}
	}
	start := time.Now()
	pw := startFollower(ctx, t, k.Manifests, k.CRISocket)
	found := pw.await(ctx, t, name, types.ReasonFound, start, 30*time.Second, "(registry.example/app:1): the kubelet starts the pod")
	close(release)
	started := pw.await(ctx, t, name, types.ReasonStarted, start, 60*time.Second, "after podwatch found it")
	t.Logf("boot: found %v, started %v after start (%s)", found.at.Sub(start).Round(time.Millisecond), started.at.Sub(start).Round(time.Millisecond), started.ev.Message)
	if l, ok := pw.first(name, types.ReasonAdded, time.Time{}); ok {
		t.Errorf("a found pod got StaticPodAdded: %s", l.ev.Message)
	}
}

// sandboxCreated is when the fake CRI created sandbox id.
func sandboxCreated(k *kubelet.Kubelet, id string) time.Time {
	rs := k.Runtime()
	rs.Lock()
	defer rs.Unlock()
	if sb := rs.Sandboxes[id]; sb != nil {
		return time.Unix(0, sb.CreatedAt)
	}
	return time.Time{}
}
