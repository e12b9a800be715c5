package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/types"
)

// kubeletLikeRelists reads dir as the kubelet's file source does, every
// period, until stop is closed.
func kubeletLikeRelists(t *testing.T, dir string, period time.Duration, stop <-chan struct{}) <-chan struct{} {
	return kubeletLikeRelistsWith(t, dir, period, stop, nil)
}

// kubeletLikeRelistsWith is kubeletLikeRelists with what other writers do
// to the folder between each relist's glob and its read of a file
// (before, given the file's path), and after the relist (the func
// before returns, or nil).
func kubeletLikeRelistsWith(t *testing.T, dir string, period time.Duration, stop <-chan struct{}, before func(path string) func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			paths, err := filepath.Glob(filepath.Join(dir, "[^.]*"))
			if err != nil {
				t.Error(err)
				return
			}
			sort.Strings(paths)
			var after []func()
			for _, p := range paths {
				if before != nil {
					if f := before(p); f != nil {
						after = append(after, f)
					}
				}
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
					if _, err := os.ReadFile(p); err != nil {
						t.Error(err)
						return
					}
				}
			}
			for _, f := range after {
				f()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

// pollLog polls the log, the only signal the agent gives of what the loop
// saw (or its stdout, which the event pipeline writes after), until done
// says it holds what is waited for; false when it did not within the time
// given.
func pollLog(logs *testutil.LockedBuffer, within time.Duration, done func(log string) bool) bool {
	deadline := time.Now().Add(within)
	for !done(logs.String()) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// waitLog waits until the log holds want.
func waitLog(t *testing.T, logs *testutil.LockedBuffer, want string) {
	t.Helper()
	if !pollLog(logs, 20*time.Second, func(log string) bool { return strings.Contains(log, want) }) {
		t.Fatalf("no %q in the log within 20s:\n%s", want, logs.String())
	}
}

// The whole agent, a kubelet-like reader on its folder: the phase becomes
// known at the reader's period, and when the reader stops, one
// KubeletRelistLost Warning goes out. Podwatch's own lists, at the same
// period, read every file while they are fresh, which must not make a
// phase of their own.
func TestAgentSeesAKubeletLikeRelistAndItsLoss(t *testing.T) {
	o := relistOptions(t)
	// The manifests are fresh: podwatch's own lists re-read them all until
	// they are older than its period and two seconds, and until then no
	// full read is taken for a relist. A short period keeps that short.
	// podwatch is told the kubelet's period, as it is in production, and
	// lists at it itself.
	o.Source.FileCheckFrequency = 700 * time.Millisecond
	stdout, logs := runWithPods(t, o, "a", "b")
	stop := make(chan struct{})
	stopped := kubeletLikeRelists(t, o.Source.Path, 700*time.Millisecond, stop)
	waitLog(t, logs, "kubelet relist phase known")
	close(stop)
	<-stopped
	waitLog(t, logs, "kubelet relist lost")
	waitLog(t, logs, "kubelet relist phase unknown")
	known := ""
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "kubelet relist phase known") {
			known = line
		}
	}
	_, rest, _ := strings.Cut(known, "period=")
	period, err := time.ParseDuration(strings.Fields(rest + " ")[0])
	if err != nil || period < 650*time.Millisecond || period > 750*time.Millisecond {
		t.Errorf("known at another period than the reader's 700ms ± 50ms: %s", known)
	}
	// The Warning goes out through the event pipeline, after the log line.
	pollLog(stdout, 20*time.Second, func(out string) bool { return strings.Contains(out, string(types.ReasonKubeletRelistLost)) })
	evs := withReason(stdoutEvents(t, stdout.String()), types.ReasonKubeletRelistLost)
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "the kubelet may be down or reading another folder") {
		t.Errorf("KubeletRelistLost events: %+v\nstdout:\n%s", evs, stdout.String())
	}
}

// The whole agent, a kubelet-like reader on its folder: once the phase is
// known, web.yaml turns invalid during a relist, after its glob and before
// its read, and is fixed with the same content before the relist is taken
// in. The relist read it invalid and dropped the pod, the fix started it
// again: podwatch says REMOVE and ADD, though its own view of the folder
// ends as it began. The writer's open comes as the relist reaches the
// file and is taken for the relist's, which then opens it again; so
// would a reader of a write made just after the relist's read, so the
// REMOVE says the relist may have read the write. What it claims rests
// on its seeing that relist on the phase: a loaded machine may make it
// miss the relist, or take it off the phase, and then the write is made
// again at a later relist.
func TestAgentSaysARelistReadAWriteMadeDuringIt(t *testing.T) {
	o := relistOptions(t)
	o.Source.FileCheckFrequency = time.Second // the reader's period
	// web.yaml is not the last file: the relist's open of the last one
	// completes it, and a writer's open of it would be taken for that.
	stdout, logs := runWithPods(t, o, "a", "web", "z")
	var armed atomic.Bool
	wrote := make(chan time.Time, 1)
	web := filepath.Join(o.Source.Path, "web.yaml")
	write := func(content string) {
		if err := os.WriteFile(web, []byte(content), 0o600); err != nil {
			t.Error(err)
		}
	}
	stop := make(chan struct{})
	// A period of a second: the relist is taken in half a second after it
	// was seen, and the fix comes 200ms after the invalid write.
	stopped := kubeletLikeRelistsWith(t, o.Source.Path, time.Second, stop, func(p string) func() {
		if p != web || !armed.CompareAndSwap(true, false) {
			return nil
		}
		wrote <- time.Now()
		write("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers: [{name: c")
		return func() {
			// What the writer does: fix it a moment later.
			time.Sleep(200 * time.Millisecond)
			write(metricsPod("web"))
		}
	})
	defer func() {
		close(stop)
		<-stopped
	}()
	waitLog(t, logs, "kubelet relist phase known")
	const attempts = 5
	for i := 0; ; i++ {
		if i == attempts {
			t.Fatalf("in %d relists the write was made in, podwatch saw none on the phase:\n%s", attempts, logs.String())
		}
		armed.Store(true)
		if onPhase(t, logs, <-wrote) {
			break
		}
		waitPhaseKnown(t, logs)
	}
	deadline := time.Now().Add(20 * time.Second)
	var ops []string
	for {
		ops = ops[:0]
		var remove string
		for _, e := range stdoutEvents(t, stdout.String()) {
			if !strings.HasPrefix(e.InvolvedObject.Name, "web") {
				continue
			}
			switch e.Reason {
			case types.ReasonAdded, types.ReasonRemoved:
				ops = append(ops, e.Reason)
				if e.Reason == types.ReasonRemoved {
					remove = e.Message
				}
			}
		}
		if len(ops) >= 3 {
			if want := []string{types.ReasonAdded, types.ReasonRemoved, types.ReasonAdded}; !slices.Equal(ops[:3], want) {
				t.Fatalf("web's pod events %v, want %v\nlog:\n%s", ops, want, logs.String())
			}
			if !strings.HasPrefix(remove, "web.yaml read mid-change by the kubelet's relist: it may have stopped the pod at its relist") || !strings.Contains(remove, "may skip this") {
				t.Errorf("REMOVE message %q: want it to say the relist may have read the write", remove)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("web's pod events %v within 20s, want ADD, REMOVE, ADD\nstdout:\n%s\nlog:\n%s", ops, stdout.String(), logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPhaseKnown waits until the phase the log last gave is known.
func waitPhaseKnown(t *testing.T, logs *testutil.LockedBuffer) {
	t.Helper()
	known := func(log string) bool {
		last := ""
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, `msg="kubelet relist phase`) {
				last = line
			}
		}
		return strings.Contains(last, `msg="kubelet relist phase known"`) || strings.Contains(last, "state=known")
	}
	if !pollLog(logs, 20*time.Second, known) {
		t.Fatalf("the phase not known again within 20s:\n%s", logs.String())
	}
}

// onPhase waits for the detector's word on the full read that was under
// way at the time given (its folder open dated within half the reader's
// period of it: the detector dates an open by when it read it, which a
// loaded machine makes late): true when it saw it on the phase, false when
// it saw it off the phase, or not within three seconds (broken off, or
// set aside).
func onPhase(t *testing.T, logs *testutil.LockedBuffer, at time.Time) bool {
	t.Helper()
	var seen string // the detector's line for that read
	found := func(log string) bool {
		for _, line := range strings.Split(log, "\n") {
			if !strings.Contains(line, `msg="full read of the folder seen"`) {
				continue
			}
			_, rest, _ := strings.Cut(line, " at=")
			stamp, _, _ := strings.Cut(rest, " ")
			open, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				t.Fatalf("no time in %q: %v", line, err)
			}
			if d := at.Sub(open); d <= 500*time.Millisecond && d >= -500*time.Millisecond {
				seen = line // not another relist's, a period away
				return true
			}
		}
		return false
	}
	switch {
	case !pollLog(logs, 3*time.Second, found):
		t.Logf("the relist the write was made in at %v was not seen", at)
		return false
	case !strings.Contains(seen, "onPhase=true"):
		t.Logf("the relist the write was made in was seen off the phase: %s", seen)
		return false
	}
	return true
}

// runWithPods writes a pod manifest NAME.yaml for each name into o's
// folder, runs the agent on it until the test ends, and returns its stdout
// and log once it has started.
func runWithPods(t *testing.T, o Options, names ...string) (stdout, logs *testutil.LockedBuffer) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(o.Source.Path, n+".yaml"), []byte(metricsPod(n)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stdout, logs = &testutil.LockedBuffer{}, &testutil.LockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(o, Env{Clock: clock.RealClock{}, Stdout: stdout, Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}).Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	waitLog(t, logs, "podwatch starting")
	return stdout, logs
}
