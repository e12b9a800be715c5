package metrics

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/events"
)

// Manifest states of podwatch_manifests, from the last snapshot.
const (
	StateValid      = "valid"
	StateInvalid    = "invalid"
	StateDuplicate  = "duplicate" // valid, but an earlier file defines the same pod
	StateUnreadable = "unreadable"
	StateNotRegular = "not_regular"
)

const numStates = 5

// manifestStates are the states in the order stateOf indexes them; a
// function, so that no package-level table can be changed.
func manifestStates() [numStates]string {
	return [...]string{StateValid, StateInvalid, StateDuplicate, StateUnreadable, StateNotRegular}
}

// recordedEvents are the reason and type pairs the diff records; a
// function, so that no package-level table can be changed. A pair missing
// here is still counted, from its first occurrence on.
func recordedEvents() []struct{ reason, typ string } {
	normal, warning := v1.EventTypeNormal, v1.EventTypeWarning
	return []struct{ reason, typ string }{
		{types.ReasonAdded, normal},
		{types.ReasonFound, normal},
		{types.ReasonUpdated, normal},
		{types.ReasonRemoved, normal},
		{types.ReasonRemoved, warning}, // the file turned invalid or the folder vanished
		{types.ReasonDuplicate, warning},
		{types.ReasonInvalid, warning},
		{types.ReasonIgnored, warning},
		{types.ReasonUnreadable, warning},
		{types.ReasonPathMissing, warning},
		{types.ReasonWatchDegraded, warning},
		{types.ReasonMayHaveRestarted, warning},
	}
}

// listBuckets span an unchanged relist of a few files (a stat each, no
// read) to a cold list of 10,000 manifests (each read and decoded), so that
// both ends of a node's range fall inside a bucket, not past the last one.
func listBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

// EventStats is what the event recorder offers: *events.Recorder.
type EventStats interface{ Stats() events.Stats }

// Metrics holds podwatch's metrics and readiness. Its methods are safe for
// concurrent use; the run loop writes, scrapes and probes read. The
// Observe and Set methods do nothing on a nil *Metrics, so code paths and
// tests without metrics need no checks.
type Metrics struct {
	reg *registry

	changes       *vec[counter]
	claims        *vec[counter]
	widened       *vec[counter]
	recorded      *vec[counter]
	manifests     *manifestsCollector
	listDuration  *histogramScalar
	filesListed   *scalar
	watchUp       *scalar
	watchRestarts *scalar
	watchBackoff  *scalar
	pathErr       *scalar
	disabled      *scalar
	persisted     *scalar
	relist        relistMetrics
	follow        followMetrics // registered by EnableFollow

	// clk tells /readyz how long until the watch's next retry.
	clk clock.PassiveClock

	mu    sync.Mutex
	ready readiness
}

// New builds the metrics in a registry of their own; version is the
// agent's build version, clk the agent's clock (nil: the real one). Event
// and sink metrics appear once AddEventStats names the recorder.
func New(version string, clk clock.PassiveClock) *Metrics {
	if clk == nil {
		clk = clock.RealClock{}
	}
	m := &Metrics{
		clk: clk,
		reg: newRegistry(),
		changes: newCounterVec("podwatch_static_pod_changes_total",
			"Static pod changes the kubelet will make, by op (ADD, UPDATE, REMOVE).", "op"),
		claims:  newClaimsCounter(),
		widened: newWidenedCounter(),
		recorded: newCounterVec("podwatch_events_recorded_total",
			"Occurrences recorded as Kubernetes Events (changes and problems), by reason and type, before compression.",
			"reason", "type"),
		manifests: newManifestsCollector(),
		listDuration: newHistogram("podwatch_list_duration_seconds",
			"Time a full list of the manifest path took, reading changed files included.", listBuckets()),
		filesListed: newGauge("podwatch_files_listed",
			"Directory entries read by the last full list (1 for a single file, 0 when the path could not be listed)."),
		watchUp: newGauge("podwatch_watch_up",
			"1 when changes to the manifest path are watched as they happen, 0 when only the periodic list sees them."),
		watchRestarts: newCounter("podwatch_watch_restarts_total",
			"Times the watch came back up after being seen down."),
		watchBackoff: newGauge("podwatch_watch_backoff_seconds",
			"Current delay of the watch's restart backoff; 0 when it has not failed recently."),
		pathErr: newGauge("podwatch_manifest_path_error",
			"1 when the manifest path is missing, unreadable or neither a directory nor a file; podwatch_manifests then shows what was last known."),
		persisted: newGauge("podwatch_state_persisted",
			"1 while the published state is saved in --state-dir as of the last change; 0 when the last save failed (it is retried) or podwatch runs in memory, and a restart would announce pods again."),
		disabled: newGauge("podwatch_static_pods_disabled",
			"1 when the kubelet config turns static pods off (empty staticPodPath) and podwatch idles."),
		relist: newRelistMetrics(),
		follow: newFollowMetrics(),
	}
	buildInfo := newGauge("podwatch_build_info", "Always 1; labels say which podwatch build runs.",
		"goversion", runtime.Version(), "version", version)
	buildInfo.Set(1)
	m.persisted.Set(1) // until a save fails or the state dir is unusable
	// Every labelled counter has its series from the start, at 0, so an
	// alert rule or a rate() sees the first occurrence as an increase
	// instead of a series appearing.
	for _, op := range []types.Op{types.OpAdd, types.OpUpdate, types.OpRemove} {
		m.changes.WithLabelValues(string(op))
	}
	for _, e := range recordedEvents() {
		m.recorded.WithLabelValues(e.reason, e.typ)
	}
	fams := []family{m.changes, m.claims, m.widened, m.recorded, m.manifests, m.listDuration, m.filesListed,
		m.watchUp, m.watchRestarts, m.watchBackoff, m.pathErr, m.disabled, m.persisted, buildInfo}
	fams = append(fams, m.relist.collectors()...)
	fams = append(fams, goFamilies()...)
	fams = append(fams, processFamilies()...)
	if err := m.reg.register(fams...); err != nil {
		panic(err) // the names above are distinct: a programming error
	}
	return m
}

// ErrEventStatsAdded is returned by a second AddEventStats.
var ErrEventStatsAdded = errors.New("metrics: event stats already added")

// AddEventStats makes every scrape read ev's counters (the recorder is
// built after the metrics, which must already serve /readyz while it is).
// It can be called once.
func (m *Metrics) AddEventStats(ev EventStats) error {
	if err := m.reg.register((&eventsCollector{src: ev}).families()...); err != nil {
		if errors.Is(err, errAlreadyRegistered) {
			return ErrEventStatsAdded
		}
		return fmt.Errorf("metrics: adding event stats: %w", err)
	}
	return nil
}

// WriteText writes every metric in Prometheus's text format, as /metrics
// serves them.
func (m *Metrics) WriteText(w io.Writer) error { return m.reg.write(w) }

// ObserveSnapshot updates what a snapshot of the file source tells:
// manifests by state, the list (when Relist), the watch, and readiness.
func (m *Metrics) ObserveSnapshot(s types.Snapshot) {
	if m == nil {
		return
	}
	m.manifests.observe(s.Files)
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.Relist {
		m.listDuration.Observe(s.ListDuration.Seconds())
		m.filesListed.Set(float64(s.Listed))
	}
	m.pathErr.Set(b2f(s.PathErr != nil))
	m.watchUp.Set(b2f(s.Watch.Up))
	m.watchBackoff.Set(s.Watch.Backoff.Seconds())
	if m.ready.observe(s) {
		m.watchRestarts.Inc()
	}
}

// ObserveChanges counts what the diff published; call it with every batch
// passed to the event recorder.
func (m *Metrics) ObserveChanges(changes []types.Change) {
	if m == nil {
		return
	}
	for _, ch := range changes {
		switch {
		case ch.Reason == types.ReasonFound:
			// An inventory at a first start: no change the kubelet makes.
		case ch.Op != "":
			m.changes.WithLabelValues(string(ch.Op)).Inc()
		case ch.Reason == types.ReasonUpdated:
			// A restart the kubelet made that leaves the published pod as
			// it is (a relist's return to the winner that the watch undid
			// since): no op, a change all the same.
			m.changes.WithLabelValues(string(types.OpUpdate)).Inc()
		}
		if ch.Claim != nil {
			m.claims.WithLabelValues(claimLabels(ch.Claim)).Inc()
			for _, why := range widenedWhy(ch.Claim) {
				m.widened.WithLabelValues(why).Inc()
			}
		}
		m.recorded.WithLabelValues(ch.Reason, ch.Type).Inc()
	}
}

// SetStaticPodsDisabled marks that the kubelet ignores static pods: podwatch
// has nothing to watch and is ready as it is.
func (m *Metrics) SetStaticPodsDisabled(disabled bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.disabled.Set(b2f(disabled))
	m.ready.disabled = disabled
}

// SetStatePersisted records whether the published state is on disk; err
// says why not. It does not make podwatch unready: one node's disk must not
// hold up a DaemonSet's rollout. /readyz names it in its body.
func (m *Metrics) SetStatePersisted(saved bool, err error) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.persisted.Set(b2f(saved))
	m.ready.notPersisted = ""
	if !saved {
		m.ready.notPersisted = "state not persisted"
		if err != nil {
			m.ready.notPersisted += ": " + err.Error()
		}
	}
}

// SetStandby makes podwatch not ready while another podwatch holds the
// state dir; holder says which, and /readyz puts it in its body. An empty
// holder ends the standby.
func (m *Metrics) SetStandby(holder string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ready.standby = holder
}

// Ready reports whether podwatch sees the manifest path as the kubelet
// does, and if not, why.
func (m *Metrics) Ready() (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ready.status(m.clk.Now())
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
