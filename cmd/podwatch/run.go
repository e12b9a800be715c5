package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/source/file"
	"github.com/podwatch/podwatch/pkg/store"
)

// storeLimits let the local store take the first list of a large folder
// (one ADD per manifest, 16,384 in one burst) at disk speed, in batches of
// one fdatasync each; the API's limits are for the API.
func storeLimits() events.Limits {
	return events.Limits{QPS: 1000, Burst: 1 << 14, PendingMax: 1 << 16, KeyInterval: time.Second}
}

// persistDelay bounds how often the published state is written: a
// flapping manifest must not rewrite it on every change.
const persistDelay = time.Second

// run is the agent: snapshots from the file source go through the diff into
// the event recorder, until ctx ends; then pending event writes are flushed
// within --shutdown-timeout.
func run(ctx context.Context, opts options, clk clock.WithTicker, stdout io.Writer, log *slog.Logger) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	m := metrics.New(version)
	metricsAddr, stopMetrics, err := startMetrics(ctx, opts.Metrics, m, log)
	if err != nil {
		return err
	}
	if opts.onMetricsListen != nil {
		opts.onMetricsListen(metricsAddr)
	}
	defer func() {
		if err := stopMetrics(); err != nil {
			log.Warn("metrics server stopped with an error", "err", err)
		}
	}()
	if opts.StaticPodsDisabled {
		m.SetStaticPodsDisabled(true)
		log.Warn("the kubelet config turns static pods off (empty staticPodPath): nothing to watch; podwatch stays up idle",
			"kubeletConfig", opts.KubeletConfig)
		<-ctx.Done()
		return nil
	}
	opts.Source.NodeName = opts.NodeName
	opts.Events.Host = opts.NodeName
	src, err := file.New(opts.Source, clk, log)
	if err != nil {
		return err
	}
	out, err := events.NewStreamSink(stdout, opts.Output)
	if err != nil {
		return err
	}

	// Startup state flows one way: loaded here, passed into constructors.
	st := openStore(opts, clk, log)
	if st != nil {
		defer st.Close()
	}
	sinks := []events.Registration{events.StreamTo("stdout", out)}
	var restore []v1.Event
	if st != nil {
		sinks = append(sinks, events.DeliverTo("store", st).WithLimits(storeLimits()))
		restore = st.Events()
	}
	state := loadState(st, opts.StateDir, log)
	kubeSinks, restore, err := setupKube(ctx, opts.Kube, opts.NodeName, clk, log, restore, publishedRefs(state)...)
	if err != nil {
		return err
	}
	sinks = append(sinks, kubeSinks...)
	rec, err := events.New(opts.Events, clk, log, sinks, restore)
	if err != nil {
		return err
	}
	if err := m.AddEventStats(rec); err != nil {
		return err
	}
	l := &loop{
		rec:     rec,
		metrics: m,
		clk:     clk,
		log:     log,
		state:   state,
		opts: diff.Options{
			NodeName:     opts.NodeName,
			Path:         opts.Source.Path,
			SettleDelay:  opts.Source.SettleDelay,
			RelistPeriod: opts.Source.FileCheckFrequency,
		},
	}
	log.Info("podwatch starting", "path", opts.Source.Path, "node", opts.NodeName, "stateDir", opts.StateDir,
		"fileCheckFrequency", opts.Source.FileCheckFrequency, "settleDelay", opts.Source.SettleDelay,
		"publishedPods", len(l.state.Pods), "restoredEvents", len(restore), "metricsAddr", addrString(metricsAddr))

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	recDone := make(chan error, 1)
	go func() { recDone <- rec.Run(runCtx) }()
	saveCtx, stopSaving := context.WithCancel(context.Background())
	saveDone := make(chan error, 1)
	if st != nil {
		l.saver = newPersister(opts.StateDir, log)
		go func() { saveDone <- l.saver.Run(saveCtx) }()
	} else {
		saveDone <- nil
	}
	loopErr := l.run(runCtx, src)
	cancel()
	if err := <-recDone; err != nil {
		log.Error("event delivery failed", "err", err)
	}
	// The loop is done: hand over its last state and let the persister
	// write it while pending Events are flushed; both within
	// --shutdown-timeout, so a hung disk cannot hold up the exit.
	l.persist()
	stopSaving()
	flushCtx, stop := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer stop()
	if err := rec.Flush(flushCtx); err != nil {
		log.Warn("pending event writes not flushed before --shutdown-timeout", "timeout", opts.ShutdownTimeout, "err", err)
	}
	awaitSaved(flushCtx, saveDone, log)
	stats := rec.Stats()
	log.Info("podwatch stopped", "recorded", stats.Recorded, "events", stats.Events, "err", loopErr)
	return loopErr
}

// openStore opens the local event store; a state dir podwatch cannot use is
// a Warning, and podwatch runs on in memory.
func openStore(opts options, clk clock.PassiveClock, log *slog.Logger) *store.Store {
	st, err := store.Open(opts.StateDir, store.Options{}, clk, log)
	switch {
	case err == nil:
		return st
	case errors.Is(err, store.ErrCorrupt):
		log.Warn("local event store was corrupt and set aside", "err", err)
		return st
	default:
		log.Warn("cannot use --state-dir: running in memory; counts and published pods will not survive a restart",
			"stateDir", opts.StateDir, "err", err)
		return nil
	}
}

// publishedRefs names the published static pods, whose Events a warm start
// looks up in the API when the local store has none.
func publishedRefs(state diff.State) []v1.ObjectReference {
	refs := make([]v1.ObjectReference, 0, len(state.Pods))
	for key := range state.Pods {
		ns, name, _ := strings.Cut(key, "/")
		refs = append(refs, events.PodRef(ns, name))
	}
	return refs
}

// loop holds the diff state between snapshots. One goroutine owns it.
type loop struct {
	rec     *events.Recorder
	metrics *metrics.Metrics // nil-safe
	clk     clock.WithTicker
	opts    diff.Options
	log     *slog.Logger
	state   diff.State
	snap    *types.Snapshot

	recheck clock.Timer // something waits to settle
	dirty   bool
	saveT   clock.Timer
	saver   *persister // nil without a store
}

func (l *loop) run(ctx context.Context, src *file.Source) error {
	snaps := make(chan types.Snapshot)
	srcCtx, stopSource := context.WithCancel(ctx)
	srcDone := make(chan error, 1)
	go func() { srcDone <- src.Run(srcCtx, snaps) }()
	sourceExited := false
	defer func() {
		// Whatever ends the loop, the source's goroutines end with it.
		stopSource()
		if !sourceExited {
			<-srcDone
		}
	}()
	defer stopTimer(&l.recheck)
	defer stopTimer(&l.saveT)
	listed := false
	for {
		select {
		case <-ctx.Done():
			sourceExited = true
			return waitSource(srcDone)
		case err := <-srcDone:
			sourceExited = true
			if err != nil {
				return fmt.Errorf("file source: %w", err)
			}
			return nil
		case s := <-snaps:
			l.snap = &s
			l.metrics.ObserveSnapshot(s)
			l.step(ctx)
			if s.Relist {
				if err := l.checkUnlinked(); err != nil {
					return err
				}
			}
			if s.Relist && !listed {
				// Decoding every manifest at start leaves a heap goal far above
				// what stays live; give that memory back once.
				listed = true
				debug.FreeOSMemory()
			}
		case <-timerC(l.recheck):
			l.recheck = nil
			l.step(ctx)
		case <-timerC(l.saveT):
			l.saveT = nil
			l.persist()
		}
	}
}

// checkUnlinked ends the agent when the watched path was deleted on the
// host while a hostPath mount keeps it open: such a mount never sees the
// recreated folder, and only a restart with a fresh mount does.
func (l *loop) checkUnlinked() error {
	gone, err := file.Unlinked(l.opts.Path)
	if err != nil || !gone {
		return nil
	}
	l.log.Error("the watched path was deleted on the host and this mount will never see it again: exiting so the pod restarts with a fresh mount",
		"path", l.opts.Path)
	return fmt.Errorf("%s was deleted on the host (link count 0)", l.opts.Path)
}

func waitSource(done <-chan error) error {
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("file source: %w", err)
	}
	return nil
}

func timerC(t clock.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

func stopTimer(t *clock.Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}

func (l *loop) step(ctx context.Context) {
	if l.snap == nil {
		return
	}
	now := l.clk.Now()
	changes, next, recheck := diff.Compute(l.state, *l.snap, now, l.opts)
	l.state = next
	l.metrics.ObserveChanges(changes)
	for _, ch := range changes {
		if err := l.rec.Record(ctx, occurrence(ch)); err != nil {
			l.log.Error("writing event failed", "reason", ch.Reason, "err", err)
		}
		if ch.Op != "" {
			l.markDirty()
		}
	}
	stopTimer(&l.recheck)
	if !recheck.IsZero() {
		l.recheck = l.clk.NewTimer(max(recheck.Sub(now), time.Millisecond))
	}
}

func (l *loop) markDirty() {
	if l.saver == nil {
		return
	}
	l.dirty = true
	if l.saveT == nil {
		l.saveT = l.clk.NewTimer(persistDelay)
	}
}

// persist hands the published state to the persister if it changed since
// the last hand-over.
func (l *loop) persist() {
	if !l.dirty {
		return
	}
	l.saver.Save(l.state)
	l.dirty = false
}

// occurrence maps a change onto the object it is about.
func occurrence(ch types.Change) events.Occurrence {
	ref := events.NodeRef(ch.Object.Name)
	if ch.Object.Kind == types.KindPod {
		ref = events.PodRef(ch.Object.Namespace, ch.Object.Name)
	}
	return events.Occurrence{Object: ref, Type: ch.Type, Reason: ch.Reason, Message: ch.Message, File: ch.File}
}

// addrString logs an address as text; empty when the server is off.
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
