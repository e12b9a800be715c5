package metrics

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

func TestRelistMetricsFollowThePhase(t *testing.T) {
	m := New("v", nil)
	tg := serve(t, m)
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	check := func(step string, known, period, on, off, lost float64) {
		t.Helper()
		mfs := tg.scrape()
		for _, c := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{"podwatch_kubelet_relist_phase_known", nil, known},
			{"podwatch_kubelet_relist_period_seconds", nil, period},
			{"podwatch_kubelet_relists_seen_total", []string{"on_phase", "true"}, on},
			{"podwatch_kubelet_relists_seen_total", []string{"on_phase", "false"}, off},
			{"podwatch_kubelet_relist_lost_total", nil, lost},
		} {
			if got := value(mfs, c.name, c.labels...); got != c.want {
				t.Errorf("%s: %s%v = %v, want %v", step, c.name, c.labels, got, c.want)
			}
		}
	}
	check("before any", 0, 0, 0, 0, 0)
	m.ObserveRelist(types.RelistObservation{Relist: &types.KubeletRelist{At: at}})
	known := types.RelistPhase{State: types.RelistKnown, Period: 20 * time.Second, Last: at, Next: at.Add(20 * time.Second)}
	m.ObserveRelist(types.RelistObservation{Relist: &types.KubeletRelist{At: at, OnPhase: true}, Phase: known})
	check("known", 1, 20, 1, 1, 0)
	m.ObserveRelist(types.RelistObservation{Phase: types.RelistPhase{State: types.RelistLost, Period: 20 * time.Second, Last: at}})
	check("lost", 0, 0, 1, 1, 1)
	m.ObserveRelist(types.RelistObservation{Phase: types.RelistPhase{Why: "lost"}})
	check("unknown after lost", 0, 0, 1, 1, 1)
}
