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
	got := mustLoad(t, dir, slog.New(slog.DiscardHandler))
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
	w, s := writtenShards(t, dir)
	pods := s.Pods
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
	got := mustLoad(t, dir, slog.New(slog.DiscardHandler))
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
	got := mustLoad(t, dir, slog.New(slog.DiscardHandler))
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
	got := mustLoad(t, dir, slog.New(slog.DiscardHandler))
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
	got := mustLoad(t, dir, slog.New(slog.NewTextHandler(&logs, nil)))
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

// Losing state.json must not lose the salt: every shard carries it, so the
// digests still compare and a later UPDATE names only what changed.
func TestLostStateJSONKeepsTheSalt(t *testing.T) {
	dir := t.TempDir()
	w := shardWriter{dir: dir}
	s := diff.State{Pods: podStates(50, "img:1"), Salt: []byte("the-salt")}
	if err := w.write(s); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, StateFile)); err != nil {
		t.Fatal(err)
	}
	var logs testutil.LockedBuffer
	got := mustLoad(t, dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if string(got.Salt) != "the-salt" {
		t.Fatalf("salt %q after losing state.json, want the shards' %q", got.Salt, "the-salt")
	}
	for k, p := range got.Pods {
		if len(p.JSON) == 0 {
			t.Fatalf("%s lost its JSON although its salt is known", k)
		}
	}
	if strings.Contains(logs.String(), "announced again") {
		t.Fatalf("a log line promises what does not happen:\n%s", logs.String())
	}
}

// Shards from before they carried the salt, with state.json gone: the
// digests in them can no longer be compared, so the pods keep their hash
// and lose their JSON, and the next UPDATE says less instead of naming
// every hidden value as changed.
func TestLostSaltDropsTheUncomparableJSON(t *testing.T) {
	dir := t.TempDir()
	pods := podStates(3, "img:1")
	for i := range PodShards {
		part := diff.State{Pods: map[string]*diff.PodState{}}
		for k, p := range pods {
			if shardOf(k) == i {
				part.Pods[k] = p
			}
		}
		if err := store.SaveJSON(dir, shardName(i), part); err != nil { // no salt, as older shards were
			t.Fatal(err)
		}
	}
	got := mustLoad(t, dir, slog.New(slog.DiscardHandler))
	if len(got.Pods) != 3 || len(got.Salt) == 0 {
		t.Fatalf("%d pods, salt %q", len(got.Pods), got.Salt)
	}
	for k, p := range got.Pods {
		if len(p.JSON) != 0 || p.Hash != "img:1" {
			t.Fatalf("%s = %+v: want its hash kept and its JSON dropped", k, p)
		}
	}
}

// A corrupt state.json costs what waited to settle, not the pods; the log
// says exactly that.
func TestCorruptStateJSONKeepsThePods(t *testing.T) {
	dir := t.TempDir()
	w := shardWriter{dir: dir}
	if err := w.write(diff.State{Pods: podStates(5, "img:1"), Salt: []byte("salt")}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testutil.LockedBuffer
	got := mustLoad(t, dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if len(got.Pods) != 5 || string(got.Salt) != "salt" {
		t.Fatalf("%d pods, salt %q after a corrupt state.json", len(got.Pods), got.Salt)
	}
	if !strings.Contains(logs.String(), "the published pods come from their shards") || strings.Contains(logs.String(), "every pod is announced again") {
		t.Fatalf("log does not say what happens:\n%s", logs.String())
	}
}

// TestNewPodScrubsOnlyItself adds one pod to a shard of others: only the
// new pod is scrubbed, the others are taken from the shard as written, and
// every file is what a writer that scrubbed every pod again writes.
func TestNewPodScrubsOnlyItself(t *testing.T) {
	dir := t.TempDir()
	w, s := writtenShards(t, dir)
	pods := s.Pods
	next := diff.State{Pods: map[string]*diff.PodState{}, Salt: s.Salt}
	for k, p := range pods {
		next.Pods[k] = p
	}
	added := podStates(1001, "img:2")["kube-system/pod-1000"]
	next.Pods["kube-system/pod-1000"] = added
	w.scrubs = 0
	if err := w.write(next); err != nil {
		t.Fatal(err)
	}
	if w.scrubs != 1 {
		t.Errorf("scrubbed %d pods for one new pod, want 1", w.scrubs)
	}
	fresh := t.TempDir()
	f := shardWriter{dir: fresh}
	if err := f.write(next); err != nil {
		t.Fatal(err)
	}
	for i := range PodShards {
		a, err := os.ReadFile(filepath.Join(dir, shardName(i)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(fresh, shardName(i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from a full scrub's:\n%s\nwant\n%s", shardName(i), a, b)
		}
	}
}

// BenchmarkSaveOneNewPod is what the persister spends on one pod added
// beside 1,000 published ones: its shard, and state.json, written again.
func BenchmarkSaveOneNewPod(b *testing.B) {
	dir := b.TempDir()
	w := shardWriter{dir: dir}
	pods := podStates(1001, "img:1")
	added := pods["kube-system/pod-1000"]
	delete(pods, "kube-system/pod-1000")
	s := diff.State{Pods: pods, Salt: []byte("salt")}
	if err := w.write(s); err != nil {
		b.Fatal(err)
	}
	with := diff.State{Pods: map[string]*diff.PodState{}, Salt: s.Salt}
	for k, p := range pods {
		with.Pods[k] = p
	}
	with.Pods["kube-system/pod-1000"] = added
	b.ReportAllocs()
	for b.Loop() {
		if err := w.write(with); err != nil {
			b.Fatal(err)
		}
		if err := w.write(s); err != nil {
			b.Fatal(err)
		}
	}
}

// writtenShards writes the shards of 1,000 pods at img:1 into dir, and
// returns the writer and the state it wrote.
func writtenShards(t *testing.T, dir string) (shardWriter, diff.State) {
	t.Helper()
	w := shardWriter{dir: dir}
	s := diff.State{Pods: podStates(1000, "img:1"), Salt: []byte("salt")}
	if err := w.write(s); err != nil {
		t.Fatal(err)
	}
	return w, s
}
