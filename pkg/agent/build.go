package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/cri"
	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/follow"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/published"
	"github.com/podwatch/podwatch/pkg/source/file"
	"github.com/podwatch/podwatch/pkg/source/relist"
	"github.com/podwatch/podwatch/pkg/store"
	"github.com/podwatch/podwatch/pkg/types"
)

// parts are the agent's components, built and not yet running.
type parts struct {
	src      *file.Source
	relist   *relist.Detector // nil when --kubelet-relist-detection is off
	rec      *events.Recorder
	loop     *loop
	follower *follow.Follower // nil: changes are not followed
	kubeSink *kube.Sink       // nil: no cluster
	runtime  *cri.Client      // the follower's, nil without one
	st       *store.Store     // nil: running in memory; read-only: nothing is saved
	inMemory error            // why st is nil or read-only
	restored int              // Events restored into the recorder
}

func (p *parts) close() {
	if p.runtime != nil {
		_ = p.runtime.Close()
	}
	if p.st != nil {
		_ = p.st.Close()
	}
}

// build loads the startup state and builds the components around it.
func (a *Agent) build(ctx context.Context, m *metrics.Metrics) (*parts, error) {
	opts, clk, log := a.opts, a.env.Clock, a.env.Log
	// First, so that a standby holds nothing else while it waits.
	st, storeErr, err := a.openState(ctx, m)
	if err != nil {
		return nil, err
	}
	p := &parts{st: st, inMemory: storeErr}
	srcOpts := opts.Source
	srcOpts.NodeName = opts.NodeName
	src, err := file.New(srcOpts, clk, log)
	if err != nil {
		p.close()
		return nil, err
	}
	var det *relist.Detector
	if opts.Relist.Enabled {
		relOpts := opts.Relist
		relOpts.Path = src.Options().Path
		relOpts.OwnListPeriod = src.Options().FileCheckFrequency
		relOpts.KubeletPeriod = src.Options().FileCheckFrequency
		relOpts.OwnLists = src
		if det, err = relist.New(relOpts, clk, log); err != nil {
			p.close()
			return nil, err
		}
	}
	out, err := events.NewStreamSink(a.env.Stdout, opts.Output, opts.Events.EffectiveTextRepeatInterval(), clk)
	if err != nil {
		p.close()
		return nil, err
	}
	p.src, p.relist = src, det
	sinks := []events.Registration{events.StreamTo("stdout", out)}
	var restore []v1.Event
	var state diff.State
	if p.st != nil {
		if !p.st.ReadOnly() {
			sinks = append(sinks, events.DeliverTo("store", p.st).WithLimits(storeLimits()))
		}
		restore = p.st.Events()
		if state, err = published.Load(opts.StateDir, log); err != nil {
			p.close()
			return nil, err
		}
	}
	kubeSinks, restore, api, err := setupKube(ctx, opts.Kube, opts.NodeName, clk, log, restore, publishedRefs(state)...)
	if err != nil {
		p.close()
		return nil, err
	}
	sinks = append(sinks, kubeSinks...)
	p.kubeSink = kubeSinkOf(kubeSinks)
	// Claims said but not yet in the saved state are in the Events.
	state.ClaimSeq = max(state.ClaimSeq, events.LastClaimID(restore))
	evOpts := opts.Events
	evOpts.Host = opts.NodeName
	rec, err := events.New(evOpts, clk, log, sinks, restore)
	if err != nil {
		p.close()
		return nil, err
	}
	if err := m.AddEventStats(rec); err != nil {
		p.close()
		return nil, err
	}
	p.rec, p.restored = rec, len(restore)
	p.loop = &loop{
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
		relistTolerance: opts.Relist.EffectiveTolerance(),
	}
	if p.st != nil && !p.st.ReadOnly() {
		alarm := &stateAlarm{ctx: context.WithoutCancel(ctx), rec: rec, log: log, metrics: m, node: opts.NodeName, dir: opts.StateDir}
		p.loop.saver = published.NewPersister(opts.StateDir, clk, log, alarm.status)
	}
	if err := a.buildFollower(p, state, m, api); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// buildFollower adds the follower, and its metrics to m, when it has
// something to read: the container runtime's CRI socket, the mirror pods
// through api (nil: no cluster), or both, the runtime being read and the
// mirror pods' status explaining its warnings. It reports through the
// recorder as the loop does, and the loop hands it every change after
// recording it. With neither it says so once, and the rest runs.
func (a *Agent) buildFollower(p *parts, state diff.State, m *metrics.Metrics, api kube.API) error {
	opts, log := a.opts, a.env.Log
	if opts.RuntimeEndpoint == "" && api == nil {
		log.Info("changes are not followed to the running pods: no container runtime (--container-runtime-endpoint or --follow-pods) and no API server to read the mirror pods from; StaticPodStarted and StaticPodNotStarted are not reported")
		return nil
	}
	var rt *cri.Client
	if opts.RuntimeEndpoint != "" {
		var err error
		if rt, err = cri.New(opts.RuntimeEndpoint); err != nil {
			return fmt.Errorf("--%s: %w", FlagRuntimeEndpoint, err)
		}
	}
	if err := m.EnableFollow(); err != nil {
		if rt != nil {
			_ = rt.Close()
		}
		return err
	}
	keys := make([]string, 0, len(state.Pods))
	for key := range state.Pods {
		keys = append(keys, key)
	}
	rec := p.rec
	emit := func(ctx context.Context, ch types.Change) {
		if err := rec.Record(ctx, occurrence(ch)); err != nil {
			log.Error("writing event failed", "reason", ch.Reason, "err", err)
		}
	}
	fo := opts.Follow
	attrs := []any{"deadline", or(fo.Deadline, follow.DefaultDeadline), "pollInterval", or(fo.PollInterval, follow.DefaultPollInterval),
		"idlePollInterval", or(fo.IdlePollInterval, follow.DefaultIdlePollInterval)}
	var through string
	switch {
	case rt == nil:
		p.follower = follow.NewFromMirrorPods(fo, kube.NewMirrorPods(api), a.env.Clock, log, emit, m, keys)
		through = "the mirror pods alone (no container runtime: nothing is seen while the API server is down)"
	default:
		p.runtime = rt
		p.follower = follow.New(fo, rt, a.env.Clock, log, emit, m, keys)
		attrs = append(attrs, "endpoint", rt.Endpoint())
		through = "the container runtime"
		if api != nil {
			p.follower.WithMirrorPods(kube.NewMirrorPods(api))
			through = "the container runtime and the mirror pods"
		}
	}
	p.loop.follower = p.follower
	log.Info("following changes to the running pods through "+through, attrs...)
	return nil
}

func or(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// listenMetrics binds the metrics address before the agent starts work, so
// a port in use fails the start with a clear error rather than a goroutine
// later. With the server off it returns a nil server and address.
func listenMetrics(opts metrics.Options, m *metrics.Metrics, log *slog.Logger) (*metrics.Server, net.Addr, error) {
	srv, err := metrics.NewServer(opts, m, log)
	if err != nil {
		return nil, nil, err
	}
	addr, err := srv.Listen()
	if errors.Is(err, metrics.ErrDisabled) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return srv, addr, nil
}

// storeLimits let the local store take the first list of a large folder
// (one ADD per manifest, in one burst) at disk speed, in batches of one
// fdatasync each; the API's limits are for the API.
func storeLimits() events.Limits {
	return events.Limits{QPS: 1000, Burst: 1 << 14, PendingMax: 1 << 16, KeyInterval: time.Second}
}

// openStore opens the local event store; a state dir podwatch cannot use is
// a Warning, and podwatch runs on in memory: it returns nil and why. One
// that can be read but not written is a Warning too, and opened read-only:
// it returns the store and why nothing is saved. A state dir another
// podwatch holds is no Warning: the caller stands by.
func openStore(dir, pod string, clk clock.PassiveClock, log *slog.Logger) (*store.Store, error) {
	st, err := store.Open(dir, store.Options{Pod: pod}, clk, log)
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, store.ErrLocked):
		return nil, err
	case errors.Is(err, store.ErrCorrupt):
		log.Warn("local event store was corrupt and set aside", "err", err)
		return st, nil
	case errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission):
		// Read what can be read: a disk the kernel remounted read-only
		// still holds the published state, and running without it would
		// announce every pod again.
		ro, rerr := store.OpenReadOnly(dir, store.Options{}, clk, log)
		if errors.Is(rerr, store.ErrLocked) {
			return nil, errors.Join(rerr, err)
		}
		if rerr == nil {
			log.Warn("--state-dir can be read but not written: running from the state published there, saving nothing; a restart announces again what changed since",
				"stateDir", dir, "err", err)
			return ro, err
		}
		log.Warn("cannot use --state-dir: running in memory; counts and published pods will not survive a restart",
			"stateDir", dir, "err", err, "readOnlyErr", rerr)
		return nil, err
	default:
		log.Warn("cannot use --state-dir: running in memory; counts and published pods will not survive a restart",
			"stateDir", dir, "err", err)
		return nil, err
	}
}

// inMemoryWarning is the Node Warning that says, once, that nothing podwatch
// knows survives a restart; or, readOnly, that nothing it learns does.
func inMemoryWarning(node, dir string, err error, readOnly bool) events.Occurrence {
	if readOnly {
		return events.Occurrence{
			Object: events.NodeRef(node), Type: v1.EventTypeWarning, Reason: types.ReasonStateNotPersisted,
			Message: fmt.Sprintf("--state-dir %s cannot be written (%v): podwatch runs from the state published there and saves nothing; after a restart what changed since is announced again and Event counts go back to those saved", dir, err),
		}
	}
	return events.Occurrence{
		Object: events.NodeRef(node), Type: v1.EventTypeWarning, Reason: types.ReasonStateNotPersisted,
		Message: fmt.Sprintf("--state-dir %s cannot be used (%v): podwatch runs in memory; after a restart every static pod is announced again and Event counts start over", dir, err),
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
