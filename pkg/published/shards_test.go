package published

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/store"
)

// podStates builds n published pods whose env carries a secret.
func podStates(n int, image string) map[string]*diff.PodState {
	pods := make(map[string]*diff.PodState, n)
	for i := range n {
		name := fmt.Sprintf("pod-%04d", i)
		js := fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":%q,"env":[{"name":"TOKEN","value":"s3cr3t-%d"}]}]}}`, name, image, i)
		pods["kube-system/"+name] = &diff.PodState{File: name + ".yaml", Hash: image, JSON: json.RawMessage(js)}
	}
	return pods
}

func inodes(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for i := range PodShards {
		fi, err := os.Stat(filepath.Join(dir, shardName(i)))
		if err != nil {
			t.Fatal(err)
		}
		out[shardName(i)] = fi.Sys().(*syscall.Stat_t).Ino
	}
	return out
}

func TestShardsRoundTripScrubbed(t *testing.T) {
	dir := t.TempDir()
	w := shardWriter{dir: dir}
	s := diff.State{Pods: podStates(300, "img:1"), Reported: map[string]string{"x": "y"}, Salt: []byte("salt")}
	if err := w.write(s); err != nil {
		t.Fatal(err)
	}
	got := Load(dir, slog.New(slog.DiscardHandler))
	if len(got.Pods) != 300 || got.Reported["x"] != "y" || string(got.Salt) != "salt" {
		t.Fatalf("loaded %d pods, reported %v, salt %q", len(got.Pods), got.Reported, got.Salt)
	}
	for k, p := range got.Pods {
		if p.Hash != "img:1" || bytes.Contains(p.JSON, []byte("s3cr3t")) || !bytes.Contains(p.JSON, []byte(`"name":"TOKEN"`)) {
			t.Fatalf("%s loaded as %+v: want the hash, the env name, no secret", k, p)
		}
	}
}

func TestOneChangeRewritesOneShard(t *testing.T) {
	dir := t.TempDir()
	w := shardWriter{dir: dir}
	pods := podStates(1000, "img:1")
	s := diff.State{Pods: pods, Salt: []byte("salt")}
	if err := w.write(s); err != nil {
		t.Fatal(err)
	}
	before := inodes(t, dir)
	// One pod changes (a new PodState, as diff.Compute makes), one goes.
	next := diff.State{Pods: map[string]*diff.PodState{}, Salt: s.Salt}
	for k, p := range pods {
		next.Pods[k] = p
	}
	changed := podStates(1, "img:2")["kube-system/pod-0000"]
	next.Pods["kube-system/pod-0000"] = changed
	delete(next.Pods, "kube-system/pod-0001")
	if err := w.write(next); err != nil {
		t.Fatal(err)
	}
	after := inodes(t, dir)
	want := map[string]bool{shardName(shardOf("kube-system/pod-0000")): true, shardName(shardOf("kube-system/pod-0001")): true}
	for name, ino := range after {
		if (ino != before[name]) != want[name] {
			t.Errorf("%s rewritten: %v, want %v", name, ino != before[name], want[name])
		}
	}
	got := Load(dir, slog.New(slog.DiscardHandler))
	if len(got.Pods) != 999 || got.Pods["kube-system/pod-0000"].Hash != "img:2" || got.Pods["kube-system/pod-0001"] != nil {
		t.Fatalf("loaded %d pods; pod-0000 %+v; pod-0001 %+v", len(got.Pods), got.Pods["kube-system/pod-0000"], got.Pods["kube-system/pod-0001"])
	}
}

func TestFailedShardIsWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	w := shardWriter{dir: dir}
	s := diff.State{Pods: podStates(100, "img:1"), Salt: []byte("salt")}
	if err := w.write(s); err != nil {
		t.Fatal(err)
	}
	// The shard of pod-0000 cannot be replaced: a directory took its name.
	key := "kube-system/pod-0000"
	blocked := filepath.Join(dir, shardName(shardOf(key)))
	if err := os.Remove(blocked); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(blocked, 0o700); err != nil {
		t.Fatal(err)
	}
	next := diff.State{Pods: map[string]*diff.PodState{}, Salt: s.Salt}
	for k, p := range s.Pods {
		next.Pods[k] = p
	}
	next.Pods[key] = podStates(1, "img:2")[key]
	if err := w.write(next); err == nil || !strings.Contains(err.Error(), shardName(shardOf(key))) {
		t.Fatalf("write over a directory = %v, want an error naming the shard", err)
	}
	// Once the way is clear, the same state writes that shard again.
	if err := os.Remove(blocked); err != nil {
		t.Fatal(err)
	}
	if err := w.write(next); err != nil {
		t.Fatal(err)
	}
	got := Load(dir, slog.New(slog.DiscardHandler))
	if p := got.Pods[key]; p == nil || p.Hash != "img:2" {
		t.Fatalf("after the retry %s loads as %+v, want img:2", key, p)
	}
}

func TestStateFromBeforeShardsStillLoads(t *testing.T) {
	dir := t.TempDir()
	legacy := diff.State{Pods: podStates(3, "img:1"), Salt: []byte("salt")}
	if err := store.SaveJSON(dir, StateFile, legacy); err != nil {
		t.Fatal(err)
	}
	got := Load(dir, slog.New(slog.DiscardHandler))
	if len(got.Pods) != 3 {
		t.Fatalf("loaded %d pods from a state.json with pods and no shards, want 3", len(got.Pods))
	}
}

func TestCorruptShardCostsOnlyItsPods(t *testing.T) {
	dir := t.TempDir()
	w := shardWriter{dir: dir}
	pods := podStates(500, "img:1")
	if err := w.write(diff.State{Pods: pods, Salt: []byte("salt")}); err != nil {
		t.Fatal(err)
	}
	bad := shardOf("kube-system/pod-0000")
	if err := os.WriteFile(filepath.Join(dir, shardName(bad)), []byte(`{"pods":{`), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testutil.LockedBuffer
	got := Load(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	lost := 0
	for k := range pods {
		if shardOf(k) == bad {
			lost++
		}
	}
	if len(got.Pods) != 500-lost || got.Pods["kube-system/pod-0000"] != nil {
		t.Fatalf("loaded %d pods, want %d: all but the corrupt shard's %d", len(got.Pods), 500-lost, lost)
	}
	if !strings.Contains(logs.String(), shardName(bad)) {
		t.Errorf("no warning naming %s:\n%s", shardName(bad), logs.String())
	}
}
