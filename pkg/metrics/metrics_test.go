package metrics

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
)

// fakeStats hands out whatever the test set; the collector must read it at
// scrape time, not copy it once.
type fakeStats struct {
	mu sync.Mutex
	st events.Stats
}

func (f *fakeStats) Stats() events.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

func (f *fakeStats) set(st events.Stats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st = st
}

func pod(key string) *types.Pod { return &types.Pod{Key: key} }

func up() types.WatchStatus { return types.WatchStatus{Up: true} }

func TestScrapeFollowsSnapshotsAndChanges(t *testing.T) {
	ev := &fakeStats{}
	m := New("v1.2.3", nil)
	if err := m.AddEventStats(ev); err != nil {
		t.Fatal(err)
	}
	if err := m.AddEventStats(ev); !errors.Is(err, ErrEventStatsAdded) {
		t.Errorf("second AddEventStats = %v, want ErrEventStatsAdded", err)
	}
	tg := serve(t, m)

	mfs := tg.scrape()
	if got := value(mfs, "podwatch_build_info", "version", "v1.2.3"); got != 1 {
		t.Errorf("build_info = %v, want 1", got)
	}
	if got := value(mfs, "podwatch_manifests", "state", StateValid); got != 0 {
		t.Errorf("valid manifests before any snapshot = %v, want 0 (series present)", got)
	}

	m.ObserveSnapshot(types.Snapshot{
		Relist: true, ListDuration: 30 * time.Millisecond, Listed: 7, Watch: up(),
		Files: []*types.File{
			{Name: "a.yaml", Pod: pod("kube-system/a")},
			{Name: "b.yaml", Pod: pod("kube-system/b")},
			{Name: "c.yaml", Pod: pod("kube-system/a")}, // loses to a.yaml
			{Name: "d.yaml", Err: errWatch()},
			{Name: "e.yaml", ReadErr: errWatch()},
			{Name: "f", NotRegular: true},
		},
	})
	m.ObserveChanges([]types.Change{
		{Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonAdded},
		{Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonAdded},
		{Type: v1.EventTypeWarning, Reason: types.ReasonInvalid},
		// A relist's return to the winner, undone by the watch since: a
		// restart with no op (portWindow.wentBack in pkg/diff).
		{Type: v1.EventTypeNormal, Reason: types.ReasonUpdated},
	})
	ev.set(events.Stats{Combined: 2, Replayed: 5, Evicted: 1, Expired: 3, Events: 4, Sinks: []events.SinkStats{
		{Name: "stdout", Mode: events.Stream, Written: 3},
		{Name: "store", Mode: events.Delivered, Written: 5, Failed: 3, Coalesced: 6, Pending: 1,
			FailedByCode: map[string]uint64{"unknown": 2, "503": 1},
			Dropped:      events.Drops{PendingFull: 1, Permanent: 2, Shutdown: 3}},
	}})

	mfs = tg.scrape()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"podwatch_manifests", []string{"state", StateValid}, 2},
		{"podwatch_manifests", []string{"state", StateDuplicate}, 1},
		{"podwatch_manifests", []string{"state", StateInvalid}, 1},
		{"podwatch_manifests", []string{"state", StateUnreadable}, 1},
		{"podwatch_manifests", []string{"state", StateNotRegular}, 1},
		{"podwatch_list_duration_seconds", nil, 1}, // sample count
		{"podwatch_files_listed", nil, 7},
		{"podwatch_watch_up", nil, 1},
		{"podwatch_static_pod_changes_total", []string{"op", "ADD"}, 2},
		{"podwatch_static_pod_changes_total", []string{"op", "REMOVE"}, 0},
		{"podwatch_static_pod_changes_total", []string{"op", "UPDATE"}, 1},
		{"podwatch_events_recorded_total", []string{"reason", types.ReasonAdded, "type", v1.EventTypeNormal}, 2},
		{"podwatch_events_recorded_total", []string{"reason", types.ReasonInvalid, "type", v1.EventTypeWarning}, 1},
		{"podwatch_events_combined_total", nil, 2},
		{"podwatch_events_replayed_total", nil, 5},
		{"podwatch_events_evicted_total", nil, 1},
		{"podwatch_events_expired_total", nil, 3},
		{"podwatch_events_cached", nil, 4},
		{"podwatch_event_sink_writes_total", []string{"sink", "stdout"}, 3},
		{"podwatch_event_sink_writes_total", []string{"sink", "store"}, 5},
		{"podwatch_event_sink_write_errors_total", []string{"sink", "store", "code", CodeUnknown}, 2},
		{"podwatch_event_sink_write_errors_total", []string{"sink", "store", "code", "503"}, 1},
		{"podwatch_event_sink_coalesced_total", []string{"sink", "store"}, 6},
		{"podwatch_event_sink_dropped_total", []string{"sink", "store", "reason", DropPendingFull}, 1},
		{"podwatch_event_sink_dropped_total", []string{"sink", "store", "reason", DropPermanent}, 2},
		{"podwatch_event_sink_dropped_total", []string{"sink", "store", "reason", DropShutdown}, 3},
		{"podwatch_pending_writes", []string{"sink", "store"}, 1},
		{"podwatch_static_pods_disabled", nil, 0},
		{"process_resident_memory_bytes", nil, -2}, // present: checked below
	} {
		got := value(mfs, c.name, c.labels...)
		if c.want == -2 {
			if got <= 0 {
				t.Errorf("%s = %v, want > 0", c.name, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if h := mfs["podwatch_list_duration_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleSum() != 0.03 {
		t.Errorf("list duration sum = %v, want 0.03", h.GetSampleSum())
	}

	// A watch snapshot is no list: the histogram does not move.
	ev.set(events.Stats{Sinks: []events.SinkStats{{Name: "store", Written: 9}}})
	m.ObserveSnapshot(types.Snapshot{Watch: up(), Files: []*types.File{{Name: "a.yaml", Pod: pod("kube-system/a")}}})
	mfs = tg.scrape()
	if got := value(mfs, "podwatch_list_duration_seconds"); got != 1 {
		t.Errorf("list samples after a watch snapshot = %v, want 1", got)
	}
	if got := value(mfs, "podwatch_manifests", "state", StateDuplicate); got != 0 {
		t.Errorf("duplicates after a.yaml alone = %v, want 0", got)
	}
	if got := value(mfs, "podwatch_event_sink_writes_total", "sink", "store"); got != 9 {
		t.Errorf("store writes = %v, want 9 (read at scrape time)", got)
	}
}

// A rule such as increase(podwatch_events_recorded_total{reason="InvalidManifest"}[10m]) > 0
// only sees the first occurrence if the series was there, at 0, before it:
// a series that appears at 1 has no increase. So every labelled counter
// has its series on the first scrape, before any event, and the agent's
// recorder adds the per-sink drop and error series as soon as it is built.
func TestLabelledCountersStartAtZero(t *testing.T) {
	m := New("dev", nil)
	if err := m.AddEventStats(&fakeStats{st: events.Stats{Sinks: []events.SinkStats{
		{Name: "stdout", Mode: events.Stream}, {Name: "store", Mode: events.Delivered},
	}}}); err != nil {
		t.Fatal(err)
	}
	tg := serve(t, m)
	mfs := tg.scrape()
	want := [][]string{
		{"podwatch_static_pod_changes_total", "op", "ADD"},
		{"podwatch_static_pod_changes_total", "op", "UPDATE"},
		{"podwatch_static_pod_changes_total", "op", "REMOVE"},
		{"podwatch_event_sink_dropped_total", "sink", "store", "reason", DropPendingFull},
		{"podwatch_event_sink_dropped_total", "sink", "store", "reason", DropPermanent},
		{"podwatch_event_sink_dropped_total", "sink", "store", "reason", DropShutdown},
		{"podwatch_event_sink_write_errors_total", "sink", "store", "code", CodeUnknown},
	}
	for _, e := range recordedEvents() {
		want = append(want, []string{"podwatch_events_recorded_total", "reason", e.reason, "type", e.typ})
	}
	for _, w := range []string{types.ReasonAdded, types.ReasonUpdated, types.ReasonRemoved, types.ReasonDuplicate,
		types.ReasonInvalid, types.ReasonIgnored, types.ReasonUnreadable, types.ReasonPathMissing, types.ReasonWatchDegraded} {
		if value(mfs, "podwatch_events_recorded_total", "reason", w) != 0 {
			t.Errorf("podwatch_events_recorded_total{reason=%q} missing before any event", w)
		}
	}
	for _, w := range want {
		if got := value(mfs, w[0], w[1:]...); got != 0 {
			t.Errorf("%s%v before any event = %v, want 0 (-1: no series)", w[0], w[1:], got)
		}
	}

	// The first occurrence is then an increase of the series that was there.
	m.ObserveChanges([]types.Change{{Type: v1.EventTypeWarning, Reason: types.ReasonInvalid}})
	mfs = tg.scrape()
	if got := value(mfs, "podwatch_events_recorded_total", "reason", types.ReasonInvalid, "type", v1.EventTypeWarning); got != 1 {
		t.Errorf("InvalidManifest after one = %v, want 1", got)
	}
}

func TestWatchGaugesAndRestarts(t *testing.T) {
	m := New("dev", nil)
	tg := serve(t, m)
	retry := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	down := types.WatchStatus{Err: errWatch(), Backoff: 4 * time.Second, RetryAt: retry}

	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: down})
	mfs := tg.scrape()
	if up, b, r := value(mfs, "podwatch_watch_up"), value(mfs, "podwatch_watch_backoff_seconds"), value(mfs, "podwatch_watch_restarts_total"); up != 0 || b != 4 || r != 0 {
		t.Errorf("down at start: up %v backoff %v restarts %v, want 0 4 0", up, b, r)
	}
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: types.WatchStatus{Up: true, Backoff: 4 * time.Second}})
	m.ObserveSnapshot(types.Snapshot{Watch: types.WatchStatus{Up: true, Backoff: 4 * time.Second}})
	m.ObserveSnapshot(types.Snapshot{Watch: down})
	m.ObserveSnapshot(types.Snapshot{Watch: down})
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: up()})
	mfs = tg.scrape()
	if up, b, r := value(mfs, "podwatch_watch_up"), value(mfs, "podwatch_watch_backoff_seconds"), value(mfs, "podwatch_watch_restarts_total"); up != 1 || b != 0 || r != 2 {
		t.Errorf("after two recoveries: up %v backoff %v restarts %v, want 1 0 2", up, b, r)
	}
	if got := value(mfs, "podwatch_event_sink_writes_total"); got != -1 {
		t.Errorf("sink metrics without a recorder = %v, want absent", got)
	}
}

func TestReadyz(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	m := New("dev", clk)
	tg := serve(t, m)

	if code, body := tg.get("/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	if code, body := tg.get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, NotReadyFirstList) {
		t.Errorf("/readyz before the first list = %d %q, want 503 %q", code, body, NotReadyFirstList)
	}
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: up()})
	if code, body := tg.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the first list = %d %q, want 200", code, body)
	}
	// The body says in words when the watch is retried, as of the clock.
	m.ObserveSnapshot(types.Snapshot{Watch: types.WatchStatus{Err: errWatch(), Backoff: 8 * time.Second, RetryAt: now.Add(8 * time.Second)}})
	for _, c := range []struct {
		at   time.Duration
		want string
	}{
		{0, "retrying in 8s"},
		{5500 * time.Millisecond, "retrying in 3s"}, // 2.5s left, rounded up
		{7900 * time.Millisecond, "retrying in 1s"},
		{8 * time.Second, "retrying now"},
		{time.Minute, "retrying now"}, // overdue: the loop is about to
	} {
		clk.SetTime(now.Add(c.at))
		code, body := tg.get("/readyz")
		want := NotReadyWatchDown + ": " + errWatch().Error() + "; " + c.want
		if code != http.StatusServiceUnavailable || strings.TrimSpace(body) != want {
			t.Errorf("/readyz %v into a watch down = %d %q, want 503 %q", c.at, code, body, want)
		}
	}
	// A missing path is retried without backoff.
	clk.SetTime(now)
	m.ObserveSnapshot(types.Snapshot{Watch: types.WatchStatus{Err: errWatch(), RetryAt: now}})
	if _, body := tg.get("/readyz"); !strings.HasSuffix(strings.TrimSpace(body), "; retrying now") || strings.Contains(body, "backoff") {
		t.Errorf("/readyz with no backoff = %q, want it to end in retrying now", body)
	}
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: up()})
	if code, body := tg.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the watch restarted = %d %q, want 200", code, body)
	}
}

// A standby is not ready, whatever it lists, and says who holds the state
// dir; taking over makes it ready again.
func TestStandbyIsNotReady(t *testing.T) {
	m := New("dev", nil)
	tg := serve(t, m)
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: up()})
	m.SetStandby("held by pod podwatch-x7k2p")
	if code, body := tg.get("/readyz"); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != NotReadyStandby+": held by pod podwatch-x7k2p" {
		t.Errorf("/readyz in standby = %d %q, want 503 naming the holder", code, body)
	}
	m.SetStandby("")
	if code, body := tg.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the standby = %d %q, want 200", code, body)
	}
}

// With static pods off there is nothing to list: ready at once, and said so.
func TestStaticPodsDisabledIsReady(t *testing.T) {
	m := New("dev", nil)
	tg := serve(t, m)
	m.SetStaticPodsDisabled(true)
	if code, body := tg.get("/readyz"); code != http.StatusOK || !strings.Contains(body, "disabled") {
		t.Errorf("/readyz = %d %q, want 200 saying static pods are disabled", code, body)
	}
	if got := value(tg.scrape(), "podwatch_static_pods_disabled"); got != 1 {
		t.Errorf("podwatch_static_pods_disabled = %v, want 1", got)
	}
}

// The loop writes while scrapes and probes read; -race checks the rest.
func TestConcurrentObserveAndScrape(t *testing.T) {
	m := New("dev", nil)
	if err := m.AddEventStats(&fakeStats{}); err != nil {
		t.Fatal(err)
	}
	tg := serve(t, m)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			m.ObserveSnapshot(types.Snapshot{Relist: i%2 == 0, Watch: types.WatchStatus{Up: i%3 != 0},
				Files: []*types.File{{Name: "a", Pod: pod("ns/a")}, {Name: "b", Pod: pod("ns/a")}}})
			m.ObserveChanges([]types.Change{{Op: types.OpUpdate, Type: v1.EventTypeNormal, Reason: types.ReasonUpdated}})
		}
	}()
	for range 20 {
		tg.scrape()
		tg.get("/readyz")
	}
	<-done
	if got := value(tg.scrape(), "podwatch_static_pod_changes_total", "op", "UPDATE"); got != 200 {
		t.Errorf("updates = %v, want 200", got)
	}
}

// Names, help and units as promtool would check them.
func TestMetricsLint(t *testing.T) {
	m := New("dev", nil)
	if err := m.AddEventStats(&fakeStats{st: events.Stats{Sinks: []events.SinkStats{{Name: "stdout"}}}}); err != nil {
		t.Fatal(err)
	}
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: up()})
	m.ObserveChanges([]types.Change{{Op: types.OpAdd, Type: v1.EventTypeNormal, Reason: types.ReasonAdded}})
	if err := m.EnableFollow(); err != nil {
		t.Fatal(err)
	}
	m.ObserveFollow(types.FollowObservation{Reports: []types.FollowReport{{Reason: types.ReasonStarted, Type: v1.EventTypeNormal, Took: time.Second}}})
	mfs := testutil.GatherMetrics(t, m)
	problems, err := promlint.NewWithMetricFamilies(slices.Collect(maps.Values(mfs))).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "podwatch_") {
			t.Errorf("lint %s: %s", p.Metric, p.Text)
		}
	}
}

// Two Metrics in one process must not collide: nothing is global.
func TestNoGlobalRegistry(t *testing.T) {
	a, b := New("a", nil), New("b", nil)
	a.ObserveChanges([]types.Change{{Op: types.OpAdd, Reason: types.ReasonAdded, Type: v1.EventTypeNormal}})
	tb := serve(t, b)
	if got := value(tb.scrape(), "podwatch_static_pod_changes_total", "op", "ADD"); got != 0 {
		t.Errorf("b saw a's change: %v", got)
	}
}

// Paths without metrics pass a nil *Metrics.
func TestNilMetricsIsANoOp(t *testing.T) {
	var m *Metrics
	m.ObserveSnapshot(types.Snapshot{Relist: true})
	m.ObserveChanges([]types.Change{{Op: types.OpAdd}})
	m.SetStaticPodsDisabled(true)
	m.ObserveRelist(types.RelistObservation{Relist: &types.KubeletRelist{}})
	m.ObserveFollow(types.FollowObservation{Reports: []types.FollowReport{{Reason: types.ReasonStarted}}})
}

// A state not on disk is loud but not unready: the gauge drops to 0 and
// /readyz names it with 200, so one node's disk cannot stall a rollout.
func TestStateNotPersistedIsReadyButSaid(t *testing.T) {
	m := New("test", nil)
	m.ObserveSnapshot(types.Snapshot{Relist: true, Watch: types.WatchStatus{Up: true}})
	tg := serve(t, m)
	if got := value(tg.scrape(), "podwatch_state_persisted"); got != 1 {
		t.Fatalf("podwatch_state_persisted = %v at start, want 1", got)
	}
	m.SetStatePersisted(false, errors.New("no space left on device"))
	if got := value(tg.scrape(), "podwatch_state_persisted"); got != 0 {
		t.Fatalf("podwatch_state_persisted = %v after a failed save, want 0", got)
	}
	code, body := tg.get("/readyz")
	if code != http.StatusOK || !strings.Contains(body, "state not persisted: no space left on device") {
		t.Fatalf("/readyz = %d %q", code, body)
	}
	m.SetStatePersisted(true, nil)
	if code, body := tg.get("/readyz"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/readyz after the save = %d %q", code, body)
	}
}
