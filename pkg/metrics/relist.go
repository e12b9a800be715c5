package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podwatch/podwatch/pkg/types"
)

// relistMetrics say whether podwatch knows when the kubelet relists.
type relistMetrics struct {
	known  prometheus.Gauge
	period prometheus.Gauge
	seen   *prometheus.CounterVec
	lost   prometheus.Counter
}

func newRelistMetrics() relistMetrics {
	r := relistMetrics{
		known: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "podwatch_kubelet_relist_phase_known",
			Help: "1 while the kubelet's periodic relist of the manifest folder is seen at one period, so that its next relist is known; 0 otherwise.",
		}),
		period: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "podwatch_kubelet_relist_period_seconds",
			Help: "The period of the kubelet's relist while its phase is known (its fileCheckFrequency as seen); 0 otherwise.",
		}),
		seen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podwatch_kubelet_relists_seen_total",
			Help: "Full reads of the manifest folder with the kubelet's signature, by whether they fell on the known phase.",
		}, []string{"on_phase"}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podwatch_kubelet_relist_lost_total",
			Help: "Times a known relist phase stopped: no relist for three periods.",
		}),
	}
	for _, on := range []bool{true, false} {
		r.seen.WithLabelValues(strconv.FormatBool(on))
	}
	return r
}

func (r relistMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.known, r.period, r.seen, r.lost}
}

// ObserveRelist updates what an observation of the relist detector tells.
func (m *Metrics) ObserveRelist(o types.RelistObservation) {
	if m == nil {
		return
	}
	if o.Relist != nil {
		m.relist.seen.WithLabelValues(strconv.FormatBool(o.Relist.OnPhase)).Inc()
	}
	known := o.Phase.State == types.RelistKnown
	m.relist.known.Set(b2f(known))
	if known {
		m.relist.period.Set(o.Phase.Period.Seconds())
	} else {
		m.relist.period.Set(0)
	}
	if o.Phase.State == types.RelistLost {
		m.relist.lost.Inc()
	}
}
