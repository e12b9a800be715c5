package relist

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/types"
)

// testPeriod is the readers' period here: short, so that a phase is
// known in about two seconds, and well above four tolerances.
const testPeriod = 500 * time.Millisecond

// waitKnown bounds the wait for a phase: four relists and then some, on a
// loaded machine.
const waitKnown = 15 * time.Second

// reader reads a folder every period, as the kubelet does (full) or as
// podwatch's own source does (the folder, then only some files).
type reader struct {
	dir string
	// pick, for a partial reader, chooses the files read at cycle n; nil
	// reads them all, as the kubelet: glob, sort, stat, read each regular
	// file.
	pick func(names []string, n int) []string
	// afterGlob, for a full reader, runs between its glob and its reads
	// at cycle n: what other writers do to the folder meanwhile.
	afterGlob func(paths []string, n int)
	// afterOpen, for a full reader, runs between each file's open and
	// its read.
	afterOpen func(path string, n int)
	// afterRead, for a full reader, runs after each file's read.
	afterRead func(path string, n int)

	mu     sync.Mutex
	starts []time.Time // before each folder open
}

func (r *reader) sweep(n int) error {
	r.mu.Lock()
	r.starts = append(r.starts, time.Now())
	r.mu.Unlock()
	if r.pick == nil {
		paths, err := filepath.Glob(filepath.Join(r.dir, "[^.]*"))
		if err != nil {
			return err
		}
		sort.Strings(paths)
		if r.afterGlob != nil {
			r.afterGlob(paths, n)
		}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			// As the kubelet: a file gone since the glob is skipped.
			if err := r.read(p, n); err != nil && !os.IsNotExist(err) {
				return err
			}
			if r.afterRead != nil {
				r.afterRead(p, n)
			}
		}
		return nil
	}
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	for _, name := range r.pick(names, n) {
		// As podwatch's source: a file gone since the listing is skipped;
		// other writers churn the folder meanwhile.
		if _, err := os.ReadFile(filepath.Join(r.dir, name)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// read opens and reads one file, as the kubelet does, with afterOpen
// between.
func (r *reader) read(p string, n int) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if r.afterOpen != nil {
		r.afterOpen(p, n)
	}
	_, err = io.ReadAll(f)
	return err
}

// run sweeps every period until ctx ends or cycles are done (0: no
// bound), after a first sweep at once as the kubelet does.
func (r *reader) run(ctx context.Context, t *testing.T, period time.Duration, cycles int) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for n := 0; cycles == 0 || n < cycles; n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		if err := r.sweep(n); err != nil {
			t.Errorf("reader: %v", err)
			return
		}
	}
}

func (r *reader) startTimes() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.starts)
}

// manifestDir is a folder of n files and what a relist skips: a dot file,
// a folder, a FIFO and a symlink to one of the files.
func manifestDir(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("pod-%02d.yaml", i)), "kind: Pod\n")
	}
	writeFile(t, filepath.Join(dir, ".hidden.yaml"), "kind: Pod\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pod-00.yaml", filepath.Join(dir, "zz-link.yaml")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startDetector runs a detector on dir until the test ends; with wantUp,
// it returns once the watch is up.
func startDetector(t *testing.T, dir string, wantUp bool, modify ...func(*Detector)) *collector {
	t.Helper()
	d, err := New(Options{Enabled: true, Path: dir}, nil, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modify {
		m(d)
	}
	up := make(chan struct{})
	var once sync.Once
	d.newWatch = func(path string, clk clock.PassiveClock, quiet time.Duration) (watcher, error) {
		w, err := newPlatformWatch(path, clk, quiet)
		if err == nil {
			once.Do(func() { close(up) })
		}
		return w, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan types.RelistObservation)
	c, collected := collect(ctx, out)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, out) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		collected()
	})
	if wantUp {
		select {
		case <-up:
		case <-time.After(waitKnown):
			t.Fatalf("the watch of %s is not up", dir)
		}
	}
	return c
}

// startReader runs r every period until the test ends.
func startReader(t *testing.T, r *reader, period time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx, t, period, 0)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func knownAfter(n int) func([]types.RelistObservation) bool {
	return func(obs []types.RelistObservation) bool {
		on := 0
		for _, o := range obs {
			if o.Relist != nil && o.Relist.OnPhase {
				on++
			}
		}
		return last(obs).State == types.RelistKnown && on >= n
	}
}

// nearest is the start in starts nearest to at, and how far it is.
func nearest(starts []time.Time, at time.Time) (time.Time, time.Duration) {
	var best time.Time
	for _, s := range starts {
		if best.IsZero() || abs(at.Sub(s)) < abs(at.Sub(best)) {
			best = s
		}
	}
	return best, abs(at.Sub(best))
}

func TestDetectorKnowsAKubeletLikeReader(t *testing.T) {
	dir := manifestDir(t, 5)
	c := startDetector(t, dir, true)
	r := &reader{dir: dir}
	startReader(t, r, testPeriod)

	obs := c.wait(t, waitKnown, "known phase with three relists on it", knownAfter(3))
	p := last(obs)
	if abs(p.Period-testPeriod) > 50*time.Millisecond {
		t.Errorf("period %v, want %v ± 50ms", p.Period, testPeriod)
	}
	starts := r.startTimes()
	var late, seen []time.Duration
	for _, rl := range relists(obs) {
		s, off := nearest(starts, rl.At)
		if off > DefaultTolerance || rl.At.Before(s) {
			t.Errorf("relist at %v: the reader's nearest sweep began %v before", rl.At.Format("15:04:05.000"), rl.At.Sub(s))
		}
		if rl.Files != 5 {
			t.Errorf("relist of %d files, want 5 (the dot file, folder, FIFO and symlink are no part of it)", rl.Files)
		}
		late = append(late, rl.At.Sub(s))
		seen = append(seen, rl.Seen.Sub(s))
	}
	slices.Sort(late)
	slices.Sort(seen)
	t.Logf("%d relists; At after the reader's start: median %v, max %v; observed after it: median %v, max %v",
		len(late), late[len(late)/2], late[len(late)-1], seen[len(seen)/2], seen[len(seen)-1])
	// A relist seen late moves the grid by half the tolerance at most
	// (Period is rounded to the millisecond).
	if d := p.Last.Add(p.Period).Sub(p.Next); d < -time.Millisecond || d > DefaultTolerance/2 {
		t.Errorf("Next %v is not within half the tolerance before Last %v + Period %v", p.Next, p.Last, p.Period)
	}
}

// podwatchLike reads the folder and one file per cycle (the one that
// changed, as podwatch's source would), never all of them.
func podwatchLike(names []string, n int) []string {
	if len(names) == 0 {
		return nil
	}
	return names[n%len(names) : n%len(names)+1]
}

// allButLast reads every file but the last one: a near miss.
func allButLast(names []string, _ int) []string {
	if len(names) == 0 {
		return nil
	}
	return names[:len(names)-1]
}

// A reader that skips files is no relist, however often it reads. A full
// read at the end (a sentinel) is recognised; what came before it in the
// queue was handled before it, so nothing else was.
func TestDetectorPartialReadersNeverQualify(t *testing.T) {
	for name, pick := range map[string]func([]string, int) []string{"one file each cycle": podwatchLike, "all but the last": allButLast} {
		t.Run(name, func(t *testing.T) {
			dir := manifestDir(t, 4)
			c := startDetector(t, dir, true)
			// A first folder open seen tells the watch is up.
			full := &reader{dir: dir}
			if err := full.sweep(0); err != nil {
				t.Fatal(err)
			}
			c.wait(t, waitKnown, "the first full read", func(obs []types.RelistObservation) bool { return len(relists(obs)) == 1 })
			// Partial reads 250 ms apart: at the window's 100 ms, opens of
			// successive reads chain under load into what is, to the
			// detector, one slow full read; that is no partial read.
			partial := &reader{dir: dir, pick: pick}
			partial.run(context.Background(), t, 250*time.Millisecond, 12)
			if err := full.sweep(1); err != nil {
				t.Fatal(err)
			}
			obs := c.wait(t, waitKnown, "the sentinel full read", func(obs []types.RelistObservation) bool { return len(relists(obs)) >= 2 })
			got := relists(obs)
			fullStarts := full.startTimes()
			if len(got) != 2 {
				t.Fatalf("%d relists, want the two full reads:\n%s", len(got), dump(obs))
			}
			for i, rl := range got {
				if _, off := nearest(fullStarts[i:i+1], rl.At); off > DefaultTolerance {
					t.Errorf("relist %d at %v is not the full read at %v", i, rl.At, fullStarts[i])
				}
			}
			if last(obs).State == types.RelistKnown {
				t.Errorf("phase known from partial reads")
			}
		})
	}
}

// The kubelet and podwatch on one folder: podwatch's reads (its folder
// opens, a changed file read now and then) neither break the kubelet's
// relists nor count as any.
func TestDetectorKubeletAndPodwatchTogether(t *testing.T) {
	dir := manifestDir(t, 6)
	c := startDetector(t, dir, true)
	k := &reader{dir: dir}
	pw := &reader{dir: dir, pick: podwatchLike}
	startReader(t, k, testPeriod)
	startReader(t, pw, 170*time.Millisecond)

	obs := c.wait(t, waitKnown, "known phase with five relists on it", knownAfter(5))
	if p := last(obs); abs(p.Period-testPeriod) > 50*time.Millisecond {
		t.Errorf("period %v, want %v", p.Period, testPeriod)
	}
	starts := k.startTimes()
	for _, rl := range relists(obs) {
		if _, off := nearest(starts, rl.At); off > DefaultTolerance {
			t.Errorf("relist at %v is %v from the kubelet-like reader's nearest; podwatch's reads were taken for one", rl.At.Format("15:04:05.000"), off)
		}
	}
}

// checkRelists fails the test for a relist recognised away from every
// start of the kubelet-like reader.
func checkRelists(t *testing.T, obs []types.RelistObservation, starts []time.Time) {
	t.Helper()
	for _, rl := range relists(obs) {
		if s, off := nearest(starts, rl.At); off > DefaultTolerance || rl.At.Before(s) {
			t.Errorf("relist at %v is %v from the kubelet-like reader's nearest start: another reader's opens were taken for one",
				rl.At.Format("15:04:05.000"), rl.At.Sub(s))
		}
	}
}

// Between the kubelet's glob and its reads, other writers change the
// folder: a file globbed is deleted before the kubelet gets to it (its
// stat fails, it opens nothing), and one created after the glob is not
// read. Neither keeps the relist from being recognised.
func TestDetectorFolderChangedDuringTheRelist(t *testing.T) {
	dir := manifestDir(t, 6)
	c := startDetector(t, dir, true)
	restore := make(chan string, 1)
	k := &reader{dir: dir}
	k.afterGlob = func(paths []string, n int) {
		// A manifest in the middle goes before it is read, and comes back
		// after this relist's reads (renamed in, so not opened); a new
		// file is written past the glob.
		victim := filepath.Join(dir, "pod-02.yaml")
		if err := os.Remove(victim); err != nil {
			t.Errorf("remove: %v", err)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("a-new-%03d.yaml", n)), "kind: Pod\n")
		restore <- victim
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(testPeriod)
		defer tick.Stop()
		for n := 0; ; n++ {
			if err := k.sweep(n); err != nil {
				t.Errorf("reader: %v", err)
				return
			}
			// The deleted file comes back after the reads, for the next
			// relist to lose again.
			victim := <-restore
			tmp := filepath.Join(dir, ".restore")
			writeFile(t, tmp, "kind: Pod\n")
			if err := os.Rename(tmp, victim); err != nil {
				t.Errorf("restore: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	obs := c.wait(t, waitKnown, "known phase with three relists on it", knownAfter(3))
	if p := last(obs); abs(p.Period-testPeriod) > 50*time.Millisecond {
		t.Errorf("period %v, want %v", p.Period, testPeriod)
	}
	checkRelists(t, obs, k.startTimes())
}

// writesInOneRelist has a kubelet-like reader, set up by setup, read a
// folder of five manifests once, and checks that the detector saw that
// relist read all five, with want written during it (Since aside); it
// returns the relist.
func writesInOneRelist(t *testing.T, setup func(k *reader, dir string), want []types.RelistWrite) types.KubeletRelist {
	t.Helper()
	dir := manifestDir(t, 5)
	c := startDetector(t, dir, true)
	k := &reader{dir: dir}
	setup(k, dir)
	if err := k.sweep(0); err != nil {
		t.Fatal(err)
	}
	obs := c.wait(t, waitKnown, "a relist", func(obs []types.RelistObservation) bool { return len(relists(obs)) > 0 })
	r := relists(obs)[0]
	got := slices.Clone(r.Written)
	for i := range got {
		got[i].Since = time.Time{}
	}
	if r.Files != 5 || !slices.Equal(got, want) {
		t.Errorf("relist read %d files, written %+v; want 5, %+v", r.Files, got, want)
	}
	return r
}

// Files written during a relist are placed against its opens of them by
// the queue's order: one written after the glob and before its read was
// read new; one written after its read was read old; one whose writer's
// open came just as the relist reached it, taken for the relist's, may
// have been read either way (the next test: the queue looks the same).
func TestDetectorOrdersWritesDuringTheRelist(t *testing.T) {
	wrote := map[string]time.Time{} // when each write was done
	want := []types.RelistWrite{{Name: "pod-00.yaml", After: true}, {Name: "pod-01.yaml", After: true}, {Name: "pod-02.yaml", Before: true, After: true}, {Name: "pod-03.yaml", Before: true}}
	r := writesInOneRelist(t, func(k *reader, dir string) {
		write := func(name, content string) {
			writeFile(t, filepath.Join(dir, name), content)
			wrote[name] = time.Now()
		}
		k.afterGlob = func([]string, int) {
			write("pod-03.yaml", "kind: Pod # before its open\n")
		}
		k.afterRead = func(p string, _ int) {
			if filepath.Base(p) != "pod-01.yaml" {
				return
			}
			// The file just read, before the relist opens the next.
			write("pod-01.yaml", "kind: Pod # after its read\n")
			write("pod-00.yaml", "kind: Pod # after its open\n")
			// The next file to open: the writer's open comes first.
			write("pod-02.yaml", "kind: Pod # before its open\n")
		}
	}, want)
	// Since bounds each write from below: the queue was found empty before it.
	for _, w := range r.Written {
		// Zero is unknown (the queue was not found empty since the
		// watch began), and the diff falls back to the folder open.
		if w.Before && !w.Since.IsZero() && !w.Since.Before(wrote[w.Name]) {
			t.Errorf("%s: since %v, want a time before its write was done (%v)", w.Name, w.Since, wrote[w.Name])
		}
	}
}

// The relist read a file, which was written just after and read by
// another reader (podwatch's own reads every write) before the relist,
// held up, opened the next file: the queue shows an open, a write and
// an open, as when a writer's open is taken for the relist's. Seen with
// the real kubelet on a loaded machine, the next open 20 ms late; the
// write was said as certainly read by the relist, a restart the kubelet
// did not make. The relist may have read either content.
func TestDetectorReaderOfAWriteAfterTheRelistsRead(t *testing.T) {
	writesInOneRelist(t, func(k *reader, _ string) {
		k.afterRead = func(p string, _ int) {
			if filepath.Base(p) != "pod-02.yaml" {
				return
			}
			writeFile(t, p, "kind: Pod # after its read\n")
			if _, err := os.ReadFile(p); err != nil {
				t.Error(err)
			}
		}
	}, []types.RelistWrite{{Name: "pod-02.yaml", Before: true, After: true}})
}

// A file written between the relist's open of it and its read: the
// relist reads the write, and the writer's open, right after the
// relist's, merges with it on the queue, which then shows one open and
// the write after it, as for a write after the read. Seen with the real
// kubelet: an invalid write it read at its relist, said to come after
// the read, a restart podwatch did not say. The relist may have read
// either content.
func TestDetectorWriteBetweenTheRelistsOpenAndRead(t *testing.T) {
	writesInOneRelist(t, func(k *reader, _ string) {
		k.afterOpen = func(p string, _ int) {
			if filepath.Base(p) == "pod-02.yaml" {
				writeFile(t, p, "kind: Pod # between its open and its read\n")
			}
		}
	}, []types.RelistWrite{{Name: "pod-02.yaml", Before: true, After: true}})
}

// Two files written at once as the relist reaches them (measured with the
// real kubelet: ten scenarios' writers woken by one folder open): both
// writers' opens come before the relist's, so the first writer's open is
// matched as the relist's, then the second's. The relist then read both
// writes, but the queue does not say so: each file may have been read
// either way (see TestDetectorReaderOfAWriteAfterTheRelistsRead).
func TestDetectorTwoWritersAheadOfTheRelist(t *testing.T) {
	writesInOneRelist(t, func(k *reader, dir string) {
		k.afterRead = func(p string, _ int) {
			if filepath.Base(p) != "pod-01.yaml" {
				return
			}
			writeFile(t, filepath.Join(dir, "pod-02.yaml"), "kind: Pod # first writer\n")
			writeFile(t, filepath.Join(dir, "pod-03.yaml"), "kind: Pod # second writer\n")
		}
	}, []types.RelistWrite{{Name: "pod-02.yaml", Before: true, After: true}, {Name: "pod-03.yaml", Before: true, After: true}})
}

// The kubelet in a busy folder: files created, written and deleted all
// the time, podwatch reading the changed ones, an editor's swap file and
// a rename over a manifest. Its relists are recognised, no other.
func TestDetectorKubeletInABusyFolder(t *testing.T) {
	dir := manifestDir(t, 8)
	c := startDetector(t, dir, true)
	k := &reader{dir: dir}
	pw := &reader{dir: dir, pick: podwatchLike}
	startReader(t, k, testPeriod)
	startReader(t, pw, 170*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(3 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			// Out of name order: a writer's opens in order would be a
			// full read of their own.
			name := filepath.Join(dir, fmt.Sprintf("churn-%02d.yaml", n*5%13))
			switch n % 4 {
			case 0, 1:
				writeFile(t, name, "kind: Pod\n")
			case 2:
				_ = os.Remove(name)
			case 3:
				// An editor: swap file, then a rename over a manifest.
				tmp := filepath.Join(dir, fmt.Sprintf(".pod-%02d.yaml.swp", n%8))
				writeFile(t, tmp, "kind: Pod\n")
				if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("pod-%02d.yaml", n%8))); err != nil {
					t.Errorf("rename: %v", err)
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	obs := c.wait(t, waitKnown, "known phase with three relists on it", knownAfter(3))
	if p := last(obs); abs(p.Period-testPeriod) > 50*time.Millisecond {
		t.Errorf("period %v, want %v", p.Period, testPeriod)
	}
	checkRelists(t, obs, k.startTimes())
}

// A folder replaced (deleted and made again) is watched again; relists
// of the new one are recognised.
func TestDetectorFolderReplaced(t *testing.T) {
	dir := manifestDir(t, 3)
	c := startDetector(t, dir, true)
	r := &reader{dir: dir}
	if err := r.sweep(0); err != nil {
		t.Fatal(err)
	}
	c.wait(t, waitKnown, "a relist of the first folder", func(obs []types.RelistObservation) bool { return len(relists(obs)) == 1 })
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.yaml", "b.yaml"} {
		writeFile(t, filepath.Join(dir, n), "kind: Pod\n")
	}
	// The new folder is watched at once, or within the retry of a missing
	// one; a full read before that goes unseen, so read on until one is
	// recognised.
	startReader(t, r, testPeriod)
	c.wait(t, waitKnown, "a relist of the new folder", func(obs []types.RelistObservation) bool {
		got := relists(obs)
		return len(got) >= 2 && got[len(got)-1].Files == 2
	})
}

// A folder with no regular file cannot show a relist: the phase is
// Unknown and says why, and a kubelet-like reader going on reading it
// raises no loss.
func TestDetectorEmptyFolder(t *testing.T) {
	dir := manifestDir(t, 0)
	c := startDetector(t, dir, true)
	obs := c.wait(t, waitKnown, "an unknown phase saying why", func(obs []types.RelistObservation) bool {
		return last(obs).Why == whyEmpty
	})
	if last(obs).State != types.RelistUnknown {
		t.Errorf("phase %v", last(obs).State)
	}
	// Files appear: relists are recognised again.
	writeFile(t, filepath.Join(dir, "a.yaml"), "kind: Pod\n")
	r := &reader{dir: dir}
	startReader(t, r, testPeriod)
	obs = c.wait(t, waitKnown, "known phase", knownAfter(1))
	for _, o := range obs {
		if o.Phase.State == types.RelistLost {
			t.Errorf("lost: %s", o.Phase.Why)
		}
	}
}

func TestDetectorSingleFilePath(t *testing.T) {
	dir := manifestDir(t, 1)
	c := startDetector(t, filepath.Join(dir, "pod-00.yaml"), false)
	obs := c.wait(t, waitKnown, "an unknown phase saying why", func(obs []types.RelistObservation) bool { return last(obs).Why != "" && last(obs).Why != whyNone })
	if p := last(obs); p.State != types.RelistUnknown || !strings.Contains(p.Why, "not a directory") {
		t.Errorf("phase %v: %s", p.State, p.Why)
	}
}

// Beside podwatch's own file source, a full read of files all written
// within its re-read window may be its own list: it is not a relist. Once
// a file is older, a full read is one again.
func TestDetectorFullReadOfYoungFilesMayBeOwn(t *testing.T) {
	dir := manifestDir(t, 3)
	var ahead atomic.Int64 // how far the detector's wall clock runs ahead
	asked := make(chan struct{}, 8)
	c := startDetector(t, dir, true, func(d *Detector) {
		d.opts.OwnListPeriod = testPeriod
		d.wallNow = func() time.Time {
			now := time.Now().Add(time.Duration(ahead.Load()))
			asked <- struct{}{}
			return now
		}
	})
	r := &reader{dir: dir}
	if err := r.sweep(0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked: // the first read was judged
	case <-time.After(waitKnown):
		t.Fatal("the first full read was not judged")
	}
	ahead.Store(int64(OwnRereadWindow + testPeriod + time.Second))
	if err := r.sweep(1); err != nil {
		t.Fatal(err)
	}
	obs := c.wait(t, waitKnown, "a relist", func(obs []types.RelistObservation) bool { return len(relists(obs)) > 0 })
	got := relists(obs)
	if starts := r.startTimes(); len(got) != 1 || got[0].At.Before(starts[1]) {
		t.Errorf("relists %+v; want only the second read, begun at %v", got, starts[1])
	}
}

// BenchmarkDetectorRelist is the detector's cost per relist of a folder
// of 100 files, end to end: the reader's opens read from inotify, the
// folder's list, the candidate, the tracker. The reader's own cost is in
// it too; BenchmarkReaderAlone measures it alone.
func BenchmarkDetectorRelist(b *testing.B) {
	dir := benchDir(b, 100)
	w, err := newPlatformWatch(dir, clock.RealClock{}, DefaultWindow)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	d := benchDetector(b, dir, w)
	out := make(chan types.RelistObservation, 64)
	r := &reader{dir: dir}
	ctx := context.Background()
	seen := 0
	for b.Loop() {
		if err := r.sweep(0); err != nil {
			b.Fatal(err)
		}
		for got := false; !got; {
			d.handle(ctx, out, <-w.Events())
			for drained := false; !drained; {
				select {
				case o := <-out:
					if o.Relist != nil {
						got = true
						seen++
					}
				default:
					drained = true
				}
			}
		}
	}
	if seen == 0 {
		b.Fatal("no relist recognised")
	}
}

func BenchmarkReaderAlone(b *testing.B) {
	r := &reader{dir: benchDir(b, 100)}
	for b.Loop() {
		if err := r.sweep(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDetectorHandle is the detector's own work for one relist, the
// opens already read: the match and the tracker, in a folder of n files
// where one file came and went since the last relist (churn) or none did.
func BenchmarkDetectorHandle(b *testing.B) {
	for _, n := range []int{10, 100, 10000} {
		for _, churn := range []bool{false, true} {
			b.Run(fmt.Sprintf("files=%d/churn=%v", n, churn), func(b *testing.B) {
				_, d, names := benchListed(b, n)
				bt := batch{events: opens(append([]string{""}, names...)...)}
				if churn {
					bt.events = append([]event{{op: came, name: "pod-00000.yaml.new", regular: true}, {op: went, name: "pod-00000.yaml.new"}}, bt.events...)
				}
				out := make(chan types.RelistObservation, 64)
				ctx := context.Background()
				at := time.Now()
				seen := 0
				for b.Loop() {
					at = at.Add(20 * time.Second)
					bt.at, bt.since = at, at
					d.handle(ctx, out, bt)
					for len(out) > 0 {
						if o := <-out; o.Relist != nil {
							seen++
						}
					}
				}
				if seen == 0 {
					b.Fatal("no relist recognised")
				}
			})
		}
	}
}

func benchDir(b *testing.B, n int) string {
	dir := b.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("pod-%05d.yaml", i)), []byte("kind: Pod\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// benchListed is a detector on a real watch of a folder of n files, the
// folder's names known as after its first list.
func benchListed(b *testing.B, n int) (watcher, *Detector, []string) {
	dir := benchDir(b, n)
	w, err := newPlatformWatch(dir, clock.RealClock{}, DefaultWindow)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	d := benchDetector(b, dir, w)
	names, _ := w.List()
	d.names, d.known = names, true
	return w, d, names
}

func benchDetector(b *testing.B, dir string, w watcher) *Detector {
	d, err := New(Options{Enabled: true, Path: dir}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	d.tracker, d.w, d.listed = NewTracker(0, 0), w, -1
	return d
}

// BenchmarkDetectorChunkedWrite is what a writer costs the detector now
// that it watches IN_MODIFY: one op is a manifest written in chunks
// write(2) calls (open, the writes, close) in a folder of 100 files, and
// the detector reading and handling every event they made, up to a marker
// opened after them. inotify folds a write into the one before it while
// that is still unread, so events/op says how many reached the detector.
func BenchmarkDetectorChunkedWrite(b *testing.B) {
	for _, chunks := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			w, d, _ := benchListed(b, 100)
			dir := d.opts.Path
			out := make(chan types.RelistObservation, 64)
			ctx := context.Background()
			chunk := bytes.Repeat([]byte("x"), 64)
			target, marker := filepath.Join(dir, "pod-00050.yaml"), filepath.Join(dir, "pod-00099.yaml")
			events := 0
			for b.Loop() {
				f, err := os.OpenFile(target, os.O_WRONLY|os.O_TRUNC, 0)
				if err != nil {
					b.Fatal(err)
				}
				for range chunks {
					if _, err := f.Write(chunk); err != nil {
						b.Fatal(err)
					}
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				m, err := os.Open(marker)
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
				for done := false; !done; {
					bt := <-w.Events()
					for _, ev := range bt.events {
						events++
						done = done || (ev.op == opened && ev.name == "pod-00099.yaml")
					}
					d.handle(ctx, out, bt)
					for len(out) > 0 {
						<-out
					}
				}
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}
