package e2e

// A state dir the kernel remounted read-only, for real: a read-only bind
// mount of it in a private mount namespace of a re-executed test binary,
// so the host never sees it.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
)

// readOnlyEnv tells the re-executed child to run the scenario.
const readOnlyEnv = "PODWATCH_TEST_READONLY_STATE"

func TestReadOnlyStateDirRestart(t *testing.T) {
	if os.Getenv(readOnlyEnv) != "" {
		readOnlyScenario(t)
		return
	}
	inPrivateMounts(t, "TestReadOnlyStateDirRestart", readOnlyEnv, "1")
}

// readOnlyScenario is the child: an agent publishes, stops, its state dir
// turns read-only, and the next start must announce nothing unchanged.
func readOnlyScenario(t *testing.T) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Printf("%smaking / private: %v\n", mountSkip, err)
		t.Skip(err)
	}
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	first := startStateAgent(t, dir, state)
	first.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", "etcd:3.6"))
	first.waitEvent("StaticPodAdded", "web.yaml")
	first.waitEvent("StaticPodAdded", "etcd.yaml")
	published := map[string]string{"kube-system/web-" + testNode: "nginx:1.28", "kube-system/etcd-" + testNode: "etcd:3.6"}
	waitShards(t, state, published)
	first.shutdown()

	// As after a disk error: the same files, now read-only.
	if err := unix.Mount(state, state, "", unix.MS_BIND, ""); err != nil {
		fmt.Printf("%sbind mount: %v\n", mountSkip, err)
		t.Skip(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(state, unix.MNT_DETACH) })
	if err := unix.Mount("", state, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		fmt.Printf("%sremount read-only: %v\n", mountSkip, err)
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(state, "probe"), nil, 0o600); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("writing in the read-only state dir = %v, want EROFS", err)
	}

	restarted := startStateAgent(t, dir, state)
	evs := func() []v1.Event { return restarted.out.events(t) }
	markerRelisted(t, dir, "zz-marker1.yaml", evs, restarted.dump)
	for _, reason := range []string{"StaticPodAdded", "StaticPodUpdated", "StaticPodRemoved"} {
		if n := restarted.count(reason); n != 0 {
			t.Errorf("the restart on a read-only state dir announced %d %s for pods already published:\n%s", n, reason, restarted.dump())
		}
	}
	// Loudly not persisted: the Node Warning, the gauge, /readyz's body.
	warnings := eventsWith(evs(), "StateNotPersisted", "cannot be written")
	if len(warnings) != 1 || warnings[0].Type != v1.EventTypeWarning || !strings.Contains(warnings[0].Message, "read-only file system") ||
		!strings.Contains(warnings[0].Message, "runs from the state published there") {
		t.Errorf("want one StateNotPersisted Warning saying the state dir is read-only and used as published:\n%s", restarted.dump())
	}
	if v := restarted.persisted(); v != 0 {
		t.Errorf("podwatch_state_persisted = %v on a read-only state dir, want 0", v)
	}
	if code, body := restarted.readyz(); code != http.StatusOK || !strings.Contains(body, "state not persisted") {
		t.Errorf("/readyz on a read-only state dir = %d %q, want 200 saying the state is not persisted", code, body)
	}

	// A twin on the read-only dir stays out: the lock holds through a
	// read-only descriptor.
	addrs := make(chan net.Addr, 1)
	twin := startAgent(t, dir, func(o *agent.Options) {
		o.StateDir = state
		o.OnMetricsListen = func(a net.Addr) { addrs <- a }
	})
	twinState := stateAgent{runningAgent: twin, t: t, client: &http.Client{Timeout: 5 * time.Second}, base: "http://" + (<-addrs).String()}
	t.Cleanup(twinState.client.CloseIdleConnections)
	var body string
	waitUntil(t, faultsWait, func() bool {
		var code int
		code, body = twinState.readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "standby: ") && strings.Contains(body, "read-only")
	}, func() string { return "the twin on the read-only dir is no standby: " + body })

	// A change after the restart is announced, against the published state.
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	restarted.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
	if got := shardPods(t, state); !equalPods(got, published) {
		t.Errorf("the read-only state dir changed: %v", got)
	}
	if n := len(twin.out.events(t)); n != 0 {
		t.Errorf("the twin printed %d Events while standing by:\n%s", n, twin.dump())
	}
	restarted.shutdown()
	// The twin takes over from the same published state: what changed
	// since it, and no more.
	twin.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
	markerRelisted(t, dir, "zz-marker2.yaml", func() []v1.Event { return twin.out.events(t) }, twin.dump)
	if n := twin.count("StaticPodAdded") + twin.count("StaticPodRemoved") + twin.count("StaticPodUpdated"); n != 1 {
		t.Errorf("the twin announced %d changes at its takeover, want the one UPDATE not saved:\n%s", n, twin.dump())
	}
}
