//go:build linux

package relistjudge

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/source/file"
	"github.com/podwatch/podwatch/pkg/source/relist"
	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// period is the harness's fileCheckFrequency; tolerance what the issue
// asks of the detector: the period, and each relist, within 100 ms of the
// kubelet's.
const (
	period    = 2 * time.Second
	tolerance = 100 * time.Millisecond
	node      = "relist-judge"
	// clockDir is a folder in the manifest folder: the kubelet logs that
	// it does not recurse into it at every relist, right after its glob
	// (it sorts before every manifest), and at nothing else.
	clockDir = "0-relistjudge-clock"
)

func manifest(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: relist
spec:
  containers:
  - name: main
    image: registry.example/app:1
`, name)
}

// startKubelet runs the real kubelet on a folder of three manifests and
// the clock folder, or skips where it cannot run.
func startKubelet(t *testing.T) *kubelet.Kubelet {
	t.Helper()
	dir := t.TempDir()
	// The manifests are there before the kubelet starts, so that its
	// first relist reads them all.
	manifests := filepath.Join(dir, "k", "manifests")
	if err := os.MkdirAll(filepath.Join(manifests, clockDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"api", "etcd", "web"} {
		if err := os.WriteFile(filepath.Join(manifests, n+".yaml"), []byte(manifest(n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := kubelet.ForTest(ctx, t, kubelet.Config{Dir: filepath.Join(dir, "k"), NodeName: node, FileCheckFrequency: period})
	if k.Manifests != manifests {
		t.Fatalf("the kubelet reads %s, not %s", k.Manifests, manifests)
	}
	return k
}

// observer runs the detector on path and keeps what it sends.
type observer struct {
	mu      sync.Mutex
	obs     []types.RelistObservation
	changed chan struct{}
}

// startDetector runs the detector on path; ownPeriod is the period of
// podwatch's own file source beside it, 0 for none.
func startDetector(t *testing.T, path string, ownPeriod time.Duration) *observer {
	t.Helper()
	d, err := relist.New(relist.Options{Enabled: true, Path: path, OwnListPeriod: ownPeriod}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	o := &observer{changed: make(chan struct{})}
	out := make(chan types.RelistObservation)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := d.Run(ctx, out); err != nil {
			t.Errorf("detector: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case ob := <-out:
				o.mu.Lock()
				o.obs = append(o.obs, ob)
				close(o.changed)
				o.changed = make(chan struct{})
				o.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return o
}

// waitOnPhase returns the observations once n relists fell on a Known
// phase, or fails after limit.
func (o *observer) waitOnPhase(t *testing.T, n int, limit time.Duration) []types.RelistObservation {
	t.Helper()
	timeout := time.After(limit)
	for {
		o.mu.Lock()
		obs, ch := slices.Clone(o.obs), o.changed
		o.mu.Unlock()
		on := 0
		for _, ob := range obs {
			if ob.Relist != nil && ob.Relist.OnPhase {
				on++
			}
		}
		if on >= n && obs[len(obs)-1].Phase.State == types.RelistKnown {
			return obs
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("%d relists on a known phase within %v, want %d; observed:\n%s", on, limit, n, dump(obs))
		}
	}
}

func dump(obs []types.RelistObservation) string {
	var b strings.Builder
	for _, o := range obs {
		if o.Relist != nil {
			fmt.Fprintf(&b, "  relist at %s (%d files, on phase %v)\n", o.Relist.At.Format("15:04:05.000000"), o.Relist.Files, o.Relist.OnPhase)
		} else {
			fmt.Fprintf(&b, "  phase %v %v %s\n", o.Phase.State, o.Phase.Period, o.Phase.Why)
		}
	}
	return b.String()
}

// klogLine is the kubelet's line for a folder in the manifest folder, e.g.
// E1201 20:13:13.547123    1234 file.go:199] "Provided manifest path is a directory, not recursing into manifest path" path="/x/0-relistjudge-clock"
var klogLine = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s.*"Provided manifest path is a directory, not recursing into manifest path" path="([^"]+)"`)

// kubeletRelists reads, from the kubelet's log, when it began each relist
// (its stat of the clock folder, by its own clock).
func kubeletRelists(t *testing.T, k *kubelet.Kubelet) []time.Time {
	t.Helper()
	f, err := os.Open(k.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := filepath.Join(k.Manifests, clockDir)
	year := time.Now().Year()
	var out []time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := klogLine.FindStringSubmatch(sc.Text())
		if m == nil || m[2] != want {
			continue
		}
		at, err := time.ParseInLocation("0102 15:04:05.000000", m[1], time.Local)
		if err != nil {
			t.Fatalf("kubelet log time %q: %v", m[1], err)
		}
		out = append(out, at.AddDate(year, 0, 0))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func nearest(ts []time.Time, at time.Time) (time.Time, time.Duration) {
	var best time.Time
	var off time.Duration
	for _, x := range ts {
		if d := abs(at.Sub(x)); best.IsZero() || d < off {
			best, off = x, d
		}
	}
	return best, off
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// judge holds every relist the detector recognised to the kubelet's: each
// within the tolerance of one of the kubelet's, none of the kubelet's
// between the first and the last missed, the period within the tolerance
// of the kubelet's. A relist off the kubelet's is allowed only off the
// phase and at one of podwatch's own lists (ownLists, their starts): they
// read every file written in the last two seconds, as a relist does.
func judge(t *testing.T, k *kubelet.Kubelet, obs []types.RelistObservation, ownLists []time.Time) {
	t.Helper()
	p := obs[len(obs)-1].Phase
	if abs(p.Period-period) > tolerance {
		t.Errorf("period %v, want %v ± %v", p.Period, period, tolerance)
	}
	var lastAt time.Time
	for _, o := range obs {
		if o.Relist != nil {
			lastAt = o.Relist.At
		}
	}
	truth := waitKubeletRelist(t, k, lastAt.Add(-tolerance))
	var offs, lat []time.Duration
	var matched []time.Time
	own := 0
	for _, o := range obs {
		if o.Relist == nil {
			continue
		}
		at, d := nearest(truth, o.Relist.At)
		if d > tolerance {
			if _, dOwn := nearest(ownLists, o.Relist.At); !o.Relist.OnPhase && len(ownLists) > 0 && dOwn <= 20*time.Millisecond {
				own++
				continue
			}
			t.Errorf("relist at %s (on phase %v) is %v from the kubelet's nearest (%s), and no list of podwatch's",
				o.Relist.At.Format("15:04:05.000000"), o.Relist.OnPhase, d, at.Format("15:04:05.000000"))
			continue
		}
		offs = append(offs, o.Relist.At.Sub(at))
		lat = append(lat, o.Relist.Seen.Sub(at))
		matched = append(matched, at)
	}
	if len(matched) == 0 {
		t.Fatal("no relist matched the kubelet's")
	}
	missed := 0
	for _, at := range truth {
		if at.Before(matched[0]) || at.After(matched[len(matched)-1]) {
			continue
		}
		if !slices.Contains(matched, at) {
			missed++
			t.Errorf("the kubelet's relist at %s was not recognised", at.Format("15:04:05.000000"))
		}
	}
	slices.Sort(offs)
	slices.Sort(lat)
	t.Logf("%d relists matched the kubelet's (%d of its missed, %d more at podwatch's own lists); detector's time minus the kubelet's log time: median %v, min %v, max %v; recognised after the kubelet's log time: median %v, max %v; period %v",
		len(matched), missed, own, offs[len(offs)/2], offs[0], offs[len(offs)-1], lat[len(lat)/2], lat[len(lat)-1], p.Period)
}

// waitKubeletRelist reads the kubelet's relists from its log until one at
// or after t is there: the log is copied from the kubelet's stderr as it
// comes, and may trail the detector.
func waitKubeletRelist(t *testing.T, k *kubelet.Kubelet, at time.Time) []time.Time {
	t.Helper()
	deadline := time.Now().Add(3 * period)
	for {
		truth := kubeletRelists(t, k)
		if len(truth) > 0 && !truth[len(truth)-1].Before(at) {
			return truth
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kubelet's log shows no relist after %s", at.Format("15:04:05.000000"))
		}
		time.Sleep(50 * time.Millisecond) // a file being appended to: poll it
	}
}

// The real kubelet alone on the folder: its relists are recognised, the
// phase is known at its period, and each relist is dated within the
// tolerance of the kubelet's own log.
func TestDetectorFindsTheKubeletsRelists(t *testing.T) {
	k := startKubelet(t)
	o := startDetector(t, k.Manifests, 0)
	obs := o.waitOnPhase(t, 5, 60*time.Second)
	judge(t, k, obs, nil)
}

// Podwatch's own file source on the same folder, listing at its own
// period and reading the manifest edited in place every 300 ms, as the
// kubelet's watch path does too: neither adds a relist on the phase, and
// the kubelet's are all still recognised. Podwatch's lists re-read every
// file written in the last two seconds, so right after the manifests were
// written a list of its own reads them all, as a relist does: such a read
// is allowed off the phase, at one of podwatch's lists only.
func TestPodwatchBesideTheKubeletAddsNoRelist(t *testing.T) {
	k := startKubelet(t)
	const ownPeriod = 700 * time.Millisecond
	src, err := file.New(file.Options{Path: k.Manifests, NodeName: node, FileCheckFrequency: ownPeriod}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	snaps := make(chan types.Snapshot)
	var wg sync.WaitGroup
	wg.Add(2)
	first := make(chan struct{})
	go func() {
		defer wg.Done()
		if err := src.Run(ctx, snaps); err != nil {
			t.Errorf("file source: %v", err)
		}
	}()
	var (
		listsMu sync.Mutex
		lists   []time.Time // when each of podwatch's lists began
	)
	go func() {
		defer wg.Done()
		n := 0
		for {
			select {
			case s := <-snaps:
				if s.Relist {
					listsMu.Lock()
					lists = append(lists, s.Time.Add(-s.ListDuration))
					listsMu.Unlock()
				}
				if n++; n == 1 {
					close(first)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	// Podwatch's first list reads every file, as a relist does; the
	// detector starts after it.
	<-first
	o := startDetector(t, k.Manifests, ownPeriod)
	edits := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		web := filepath.Join(k.Manifests, "web.yaml")
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-edits:
				return
			case <-tick.C:
			}
			if err := os.WriteFile(web, []byte(manifest("web")+fmt.Sprintf("# edit %d\n", i)), 0o644); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	obs := o.waitOnPhase(t, 6, 90*time.Second)
	close(edits)
	listsMu.Lock()
	own := slices.Clone(lists)
	listsMu.Unlock()
	if len(own) < 10 {
		t.Errorf("podwatch listed the folder %d times, want it busy beside the kubelet", len(own))
	}
	judge(t, k, obs, own)
}
