package e2e

// A full disk under --state-dir, for real: the state dir is a size-limited
// tmpfs mounted in a private mount namespace of a re-executed test binary,
// so the host never sees it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/diff"
)

// diskFullEnv names, in the re-executed child, the folder to mount the
// tmpfs on; the child runs the scenario there instead of re-executing.
const diskFullEnv = "PODWATCH_TEST_DISKFULL_MNT"

// diskFullSize is the tmpfs size: room for the event store and the shards
// of a few pods, small enough to fill at once.
const diskFullSize = "1m"

// TestStateDiskFull runs the scenario in a child in its own mount
// namespace, then checks that the host kept no trace of it.
func TestStateDiskFull(t *testing.T) {
	if mnt := os.Getenv(diskFullEnv); mnt != "" {
		diskFullScenario(t, mnt)
		return
	}
	mnt := t.TempDir()
	inPrivateMounts(t, "TestStateDiskFull", diskFullEnv, mnt)
	// Nothing was written through to the folder under the tmpfs.
	if names, err := os.ReadDir(mnt); err != nil || len(names) != 0 {
		t.Errorf("the host's %s holds %d entries (err %v); the state belonged on the child's tmpfs", mnt, len(names), err)
	}
}

// diskFullScenario is the child: the agent in-process on a tmpfs state
// dir that is filled, edited past, and freed.
func diskFullScenario(t *testing.T, mnt string) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Printf("%smaking / private: %v\n", mountSkip, err)
		t.Skip(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size="+diskFullSize+",mode=0700"); err != nil {
		fmt.Printf("%smount -t tmpfs -o size=%s: %v\n", mountSkip, diskFullSize, err)
		t.Skip(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, 0) })
	state := filepath.Join(mnt, "state")
	dir := t.TempDir()
	a := startStateAgent(t, dir, state)
	a.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", "etcd:3.6"))
	a.waitEvent("StaticPodAdded", "web.yaml")
	a.waitEvent("StaticPodAdded", "etcd.yaml")
	first := map[string]string{"kube-system/web-" + testNode: "nginx:1.28", "kube-system/etcd-" + testNode: "etcd:3.6"}
	waitShards(t, state, first)
	waitUntil(t, faultsWait, func() bool { return a.persisted() == 1 }, func() string { return "state_persisted not 1 before the fill" })

	// Fill the tmpfs to the last byte.
	filler := filepath.Join(mnt, "filler")
	filled := fill(t, filler)
	t.Logf("filled the %s tmpfs with %d KiB", diskFullSize, filled>>10)

	// Three edits while full: an UPDATE, an ADD and a REMOVE.
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	writeByRename(t, dir, "cache.yaml", manifestYAML("cache", "redis:8"))
	if err := os.Remove(filepath.Join(dir, "etcd.yaml")); err != nil {
		t.Fatal(err)
	}
	a.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
	a.waitEvent("StaticPodAdded", "cache.yaml")
	a.waitEvent("StaticPodRemoved", "etcd.yaml")
	truth := map[string]string{"kube-system/web-" + testNode: "nginx:1.29", "kube-system/cache-" + testNode: "redis:8"}
	waitUntil(t, faultsWait, func() bool { return a.persisted() == 0 }, func() string { return "state_persisted not 0 while the disk is full" })
	if got := shardPods(t, state); equalPods(got, truth) {
		t.Fatalf("the shards hold the new state although the disk was full: %v", got)
	}
	t.Logf("while full: state_persisted 0, shards still %v", shardPods(t, state))
	// Failing for a few attempts is a Node Warning, once, naming the folder
	// and the error.
	evs := func() []v1.Event { return a.out.events(t) }
	waitUntil(t, faultsWait, func() bool { return len(eventsWith(evs(), "StateNotPersisted", "cannot save")) > 0 },
		func() string { return "no StateNotPersisted Warning while the disk is full:\n" + a.dump() })
	if w := eventsWith(evs(), "StateNotPersisted", "cannot save")[0]; w.Type != v1.EventTypeWarning ||
		!strings.Contains(w.Message, state) || !strings.Contains(w.Message, "no space left on device") {
		t.Fatalf("disk-full Warning %s %q; want a Warning naming %s and ENOSPC", w.Type, w.Message, state)
	}

	// Free the space and change nothing: the persister's retry alone must
	// bring the shards to the truth.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	waitUntil(t, 45*time.Second, func() bool { return equalPods(shardPods(t, state), truth) },
		func() string { return fmt.Sprintf("shards %v, want %v", shardPods(t, state), truth) })
	converged := time.Since(freed)
	waitUntil(t, faultsWait, func() bool { return a.persisted() == 1 }, func() string { return "state_persisted not back to 1" })
	t.Logf("shards converged %v after the space was freed, state_persisted back to 1, no further change", converged.Round(10*time.Millisecond))
	waitUntil(t, faultsWait, func() bool { return len(eventsWith(evs(), "StatePersisted", "again")) > 0 },
		func() string { return "no StatePersisted Event once the disk took the state:\n" + a.dump() })
	if n := len(eventsWith(evs(), "StateNotPersisted", "")); n != 1 {
		t.Errorf("%d StateNotPersisted lines for one full disk, want 1:\n%s", n, a.dump())
	}
	a.shutdown()

	// A restart after the clean stop announces nothing false.
	b := startAgent(t, dir, func(o *agent.Options) { o.StateDir = state })
	markerRelisted(t, dir, "zz-marker.yaml", func() []v1.Event { return b.out.events(t) }, b.dump)
	for _, reason := range []string{"StaticPodAdded", "StaticPodUpdated", "StaticPodRemoved"} {
		if n := b.count(reason); n != 0 {
			t.Errorf("the restart announced %d %s for pods already published:\n%s", n, reason, b.dump())
		}
	}
	b.shutdown()
}

// fill writes name until the file system refuses, and returns the bytes
// written.
func fill(t *testing.T, name string) int64 {
	t.Helper()
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// shardPods reads the pod shards as they are on disk, without Load (which
// sets damaged files aside), as pod key -> image of its first container.
func shardPods(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "pods-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		if strings.Contains(filepath.Base(n), ".corrupt") {
			t.Fatalf("a shard was set aside: %s", n)
		}
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var part diff.State
		if err := json.Unmarshal(data, &part); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for key, p := range part.Pods {
			var pod struct {
				Spec struct {
					Containers []struct{ Image string }
				}
			}
			if err := json.Unmarshal(p.JSON, &pod); err != nil || len(pod.Spec.Containers) == 0 {
				t.Fatalf("%s: pod %s: %v", n, key, err)
			}
			out[key] = pod.Spec.Containers[0].Image
		}
	}
	return out
}

func equalPods(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// waitShards waits until the shards on disk hold exactly want.
func waitShards(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	waitUntil(t, faultsWait, func() bool { return equalPods(shardPods(t, dir), want) },
		func() string { return fmt.Sprintf("shards %v, want %v", shardPods(t, dir), want) })
}
