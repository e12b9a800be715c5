package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type config struct {
	podwatch     string
	self         string
	base         string
	samples      int
	warmup       int
	timeout      time.Duration
	interval     time.Duration
	startTimeout time.Duration
	extraArgs    []string
}

// result holds one folder size's latencies, sample i of each watcher from
// the same rename.
type result struct {
	others   int
	floor    []time.Duration
	podwatch []time.Duration
	// skipped counts podwatch's lines that were no sample's StaticPodAdded.
	skipped int
}

// runSize measures cfg.samples renames into a folder already holding
// others manifests, with a fresh podwatch and floor watcher on it.
func runSize(cfg config, others int) (res result, err error) {
	res.others = others
	root, err := os.MkdirTemp(cfg.base, "userlatency-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(root)
	dir, stage := filepath.Join(root, "manifests"), filepath.Join(root, "stage")
	for _, d := range []string{dir, stage} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return res, err
		}
	}
	existing := make(map[string]bool, others)
	for i := range others {
		name := fmt.Sprintf("other-%05d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(manifestYAML(name)), 0o644); err != nil {
			return res, err
		}
		existing[name+"-"+node] = true
	}
	logs, err := os.Create(filepath.Join(root, "stderr.log"))
	if err != nil {
		return res, err
	}
	defer logs.Close()
	defer func() {
		if err != nil {
			if b, rerr := os.ReadFile(logs.Name()); rerr == nil {
				err = fmt.Errorf("%w\nthe watchers' stderr, last part:\n%s", err, tail(string(b), 40))
			}
		}
	}()

	floor, err := startWatcher("floor", cfg.self, []string{"-floor", dir}, os.Environ(), logs)
	if err != nil {
		return res, err
	}
	defer floor.stop(5 * time.Second)
	if _, err := floor.wait(time.Now().Add(cfg.startTimeout), "ready", func(b []byte) bool { return string(b) == "ready\n" }); err != nil {
		return res, err
	}
	args := append([]string{"--path", dir, "--node-name", node, "--state-dir", filepath.Join(root, "state"),
		"-o", "json", "--metrics-bind-address", "0"}, cfg.extraArgs...)
	pw, err := startWatcher("podwatch", cfg.podwatch, args, withoutCluster(os.Environ()), logs)
	if err != nil {
		return res, err
	}
	defer pw.stop(15 * time.Second)
	// Listed: every manifest already there has its ADD line.
	listed := time.Now().Add(cfg.startTimeout)
	for len(existing) > 0 {
		if _, err := pw.wait(listed, fmt.Sprintf("the first list's ADDs (%d left)", len(existing)), func(b []byte) bool {
			ns, name, ok := addedPod(b)
			if ok && ns == namespace && existing[name] {
				delete(existing, name)
				return true
			}
			return false
		}); err != nil {
			return res, err
		}
	}
	pw.skipped = 0
	for i := range cfg.warmup + cfg.samples {
		if i > 0 && cfg.interval > 0 {
			// Pacing, not synchronisation: the previous sample's lines are
			// in; the gap spreads the samples over podwatch's periodic work
			// (its relist, the local store's writes) as a user's changes are.
			time.Sleep(cfg.interval)
		}
		f, p, err := sample(cfg, dir, stage, floor, pw, fmt.Sprintf("ul-%05d", i))
		if err != nil {
			return res, err
		}
		if i >= cfg.warmup {
			res.floor = append(res.floor, f)
			res.podwatch = append(res.podwatch, p)
		}
	}
	res.skipped = pw.skipped
	return res, nil
}

// sample renames a new manifest into dir and returns how long after the
// rename each watcher's line for it was read.
func sample(cfg config, dir, stage string, floor, pw *watcher, name string) (time.Duration, time.Duration, error) {
	file := name + ".yaml"
	staged := filepath.Join(stage, file)
	if err := os.WriteFile(staged, []byte(manifestYAML(name)), 0o644); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := os.Rename(staged, filepath.Join(dir, file)); err != nil {
		return 0, 0, err
	}
	deadline := start.Add(cfg.timeout)
	tf, err := floor.wait(deadline, file, func(b []byte) bool { return isFloor(b, file) })
	if err != nil {
		return 0, 0, err
	}
	tp, err := pw.wait(deadline, "StaticPodAdded of "+name, func(b []byte) bool { return isAdded(b, namespace, name+"-"+node) })
	if err != nil {
		return 0, 0, err
	}
	return tf.Sub(start), tp.Sub(start), nil
}

// withoutCluster drops the variables that would send podwatch's Events to
// a cluster: the measure is of stdout alone.
func withoutCluster(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "KUBERNETES_SERVICE_") {
			out = append(out, kv)
		}
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
