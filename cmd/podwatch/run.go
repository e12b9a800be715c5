package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/source/file"
)

// run is the agent: snapshots from the file source go through the diff into
// the event recorder, until ctx ends.
func run(ctx context.Context, opts options, clk clock.WithTicker, stdout io.Writer, log *slog.Logger) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts.Source.NodeName = opts.NodeName
	src, err := file.New(opts.Source, clk, log)
	if err != nil {
		return err
	}
	out, err := events.NewStreamSink(stdout, opts.Output)
	if err != nil {
		return err
	}
	rec := events.NewRecorder(opts.NodeName, clk, out)
	dopts := diff.Options{
		NodeName:     opts.NodeName,
		Path:         opts.Source.Path,
		SettleDelay:  opts.Source.SettleDelay,
		RelistPeriod: opts.Source.FileCheckFrequency,
	}
	log.Info("podwatch starting", "path", opts.Source.Path, "node", opts.NodeName,
		"fileCheckFrequency", opts.Source.FileCheckFrequency, "settleDelay", opts.Source.SettleDelay)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	snaps := make(chan file.Snapshot)
	srcDone := make(chan error, 1)
	go func() { srcDone <- src.Run(ctx, snaps) }()

	l := loop{rec: rec, clk: clk, opts: dopts, log: log}
	listed := false
	defer l.stopTimer()
	for {
		select {
		case <-ctx.Done():
			return waitSource(srcDone)
		case err := <-srcDone:
			if err != nil {
				return fmt.Errorf("file source: %w", err)
			}
			return nil
		case s := <-snaps:
			l.snap = &s
			l.step(ctx)
			if s.Relist && !listed {
				// Decoding every manifest at start leaves a heap goal far above
				// what stays live; give that memory back once.
				listed = true
				debug.FreeOSMemory()
			}
		case <-l.timerC():
			l.timer = nil
			l.step(ctx)
		}
	}
}

func waitSource(done <-chan error) error {
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("file source: %w", err)
	}
	return nil
}

// loop holds the diff state between snapshots.
type loop struct {
	rec   *events.Recorder
	clk   clock.WithTicker
	opts  diff.Options
	log   *slog.Logger
	state diff.State
	snap  *file.Snapshot
	timer clock.Timer
}

func (l *loop) timerC() <-chan time.Time {
	if l.timer == nil {
		return nil
	}
	return l.timer.C()
}

func (l *loop) stopTimer() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

func (l *loop) step(ctx context.Context) {
	if l.snap == nil {
		return
	}
	now := l.clk.Now()
	changes, next, recheck := diff.Compute(l.state, *l.snap, now, l.opts)
	l.state = next
	for _, ch := range changes {
		if err := l.rec.Record(ctx, occurrence(ch)); err != nil {
			l.log.Error("recording event failed", "reason", ch.Reason, "err", err)
		}
	}
	l.stopTimer()
	if !recheck.IsZero() {
		l.timer = l.clk.NewTimer(max(recheck.Sub(now), time.Millisecond))
	}
}

// occurrence maps a change onto the object it is about.
func occurrence(ch diff.Change) events.Occurrence {
	ref := events.NodeRef(ch.Object.Name)
	if ch.Object.Kind == diff.KindPod {
		ref = events.PodRef(ch.Object.Namespace, ch.Object.Name)
	}
	return events.Occurrence{Object: ref, Type: ch.Type, Reason: ch.Reason, Message: ch.Message}
}
