package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/types"
)

// Env is what the agent runs in: the clock, where Events are printed, the
// logger and the version it reports.
type Env struct {
	Clock   clock.WithTicker // nil: the real clock
	Stdout  io.Writer
	Log     *slog.Logger // nil: discard
	Version string
}

// Agent is podwatch's node agent. It starts nothing until Run.
type Agent struct {
	opts Options
	env  Env
}

// New builds an agent from options that passed Validate.
func New(opts Options, env Env) *Agent {
	if env.Clock == nil {
		env.Clock = clock.RealClock{}
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	// The source turns --file-check-frequency 0 into its default; take the
	// period it will use here, so that the start log and the WatchDegraded
	// message ("changes are seen at the next relist (every ...)") say it.
	opts.Source.FileCheckFrequency = opts.Source.EffectiveFileCheckFrequency()
	// Likewise the settle delay: the source waits the default for 0, so the
	// diff must hold bad news back as long, and the start log say so.
	opts.Source.SettleDelay = opts.Source.EffectiveSettleDelay()
	return &Agent{opts: opts, env: env}
}

// Run watches the manifest folder and records what the kubelet does with it
// until ctx ends or a component fails; then it flushes pending Event writes
// and saves the published state within ShutdownTimeout. No goroutine it
// started outlives it. It returns why the agent stopped, nil on cancel.
func (a *Agent) Run(ctx context.Context) error {
	opts, log := a.opts, a.env.Log
	m := metrics.New(a.env.Version, a.env.Clock)
	srv, addr, err := listenMetrics(opts.Metrics, m, log)
	if err != nil {
		return err
	}
	if opts.OnMetricsListen != nil {
		opts.OnMetricsListen(addr)
	}
	// The metrics server serves until Run returns, shutdown included.
	serveCtx, stopServing := context.WithCancel(ctx)
	var serving errgroup.Group
	if srv != nil {
		serving.Go(func() error { return srv.Run(serveCtx) })
	}
	defer func() {
		stopServing()
		if err := serving.Wait(); err != nil {
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
	p, err := a.build(ctx, m)
	if errors.Is(err, errStandbyEnded) {
		log.Info("podwatch stopped while standing by")
		return nil
	}
	if err != nil {
		return err
	}
	defer p.close()
	log.Info("podwatch starting", "path", opts.Source.Path, "node", opts.NodeName, "stateDir", opts.StateDir,
		"fileCheckFrequency", opts.Source.FileCheckFrequency, "settleDelay", opts.Source.SettleDelay, "kubeletRelistDetection", opts.Relist.Enabled,
		"publishedPods", len(p.loop.state.Pods), "restoredEvents", p.restored, "metricsAddr", addrString(addr))

	if p.inMemory != nil {
		m.SetStatePersisted(false, p.inMemory)
		if err := p.rec.Record(ctx, inMemoryWarning(opts.NodeName, opts.StateDir, p.inMemory, p.st != nil)); err != nil {
			log.Error("writing event failed", "reason", types.ReasonStateNotPersisted, "err", err)
		}
	}

	// The persister outlives the loop: it takes the loop's last state
	// after the loop has ended.
	saveCtx, stopSaving := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSaving()
	saved := make(chan struct{})
	if p.loop.saver != nil {
		go func() {
			defer close(saved)
			_ = p.loop.saver.Run(saveCtx)
		}()
	} else {
		close(saved)
	}

	runErr := a.pipeline(ctx, p)

	// The loop is done: hand over its last state and let the persister
	// write it while pending Events are flushed; both within
	// ShutdownTimeout, so a hung disk cannot hold up the exit.
	p.loop.persist()
	stopSaving()
	flushCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), opts.ShutdownTimeout)
	defer stop()
	if err := p.rec.Flush(flushCtx); err != nil {
		log.Warn("pending event writes not flushed before --shutdown-timeout", "timeout", opts.ShutdownTimeout, "err", err)
	}
	awaitSaved(flushCtx, saved, log)
	stats := p.rec.Stats()
	log.Info("podwatch stopped", "recorded", stats.Recorded, "events", stats.Events, "err", runErr)
	return runErr
}

// pipeline runs the source, the relist detector, the diff loop and event
// delivery until ctx ends or one of them stops; whichever of the source and
// the loop stops first stops the others.
func (a *Agent) pipeline(ctx context.Context, p *parts) error {
	log := a.env.Log
	g, gctx := errgroup.WithContext(ctx)
	ctx, cancel := context.WithCancel(gctx)
	defer cancel()
	snaps := make(chan types.Snapshot)
	g.Go(func() error {
		defer cancel()
		err := p.src.Run(ctx, snaps)
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("file source: %w", err)
		}
		return nil
	})
	var relists chan types.RelistObservation
	if p.relist != nil {
		relists = make(chan types.RelistObservation)
		g.Go(func() error {
			// Not seeing the kubelet's relist is no reason to stop: the
			// phase is Unknown and podwatch times by its own relist.
			if err := p.relist.Run(ctx, relists); err != nil {
				log.Error("kubelet relist detection stopped", "err", err)
			}
			return nil
		})
	}
	g.Go(func() error {
		defer cancel()
		return p.loop.run(ctx, snaps, relists)
	})
	if p.follower != nil {
		g.Go(func() error { return p.follower.Run(ctx) })
	}
	if p.kubeSink != nil {
		g.Go(func() error {
			// Moving pod Events to their new mirror pod failing is no
			// reason to stop either: they stay where they were written.
			if err := p.kubeSink.Run(ctx); err != nil {
				log.Error("moving Events to new mirror pods stopped", "err", err)
			}
			return nil
		})
	}
	g.Go(func() error {
		// Delivery failing is no reason to stop watching: stdout and the
		// metrics still say what happens.
		if err := p.rec.Run(ctx); err != nil {
			log.Error("event delivery failed", "err", err)
		}
		return nil
	})
	return g.Wait()
}

// awaitSaved waits for the persister's last write until ctx ends. A write
// still going then is abandoned to the exiting process: the next start
// announces again what changed since the last state that was saved.
func awaitSaved(ctx context.Context, done <-chan struct{}, log *slog.Logger) {
	select {
	case <-done:
		return // saved, even if the flush used up the timeout
	default:
	}
	select {
	case <-done:
	case <-ctx.Done():
		log.Warn("published state not saved before --shutdown-timeout; the next start announces again what changed since the last save")
	}
}

// addrString logs an address as text; empty when the server is off.
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
