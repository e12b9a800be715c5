package metrics

import (
	"strconv"

	"github.com/podwatch/podwatch/pkg/types"
)

// relistMetrics say whether podwatch knows when the kubelet relists.
type relistMetrics struct {
	known  *scalar
	period *scalar
	seen   *vec[counter]
	lost   *scalar
}

func newRelistMetrics() relistMetrics {
	r := relistMetrics{
		known: newGauge("podwatch_kubelet_relist_phase_known",
			"1 while the kubelet's periodic relist of the manifest folder is seen at one period, so that its next relist is known; 0 otherwise."),
		period: newGauge("podwatch_kubelet_relist_period_seconds",
			"The period of the kubelet's relist while its phase is known (its fileCheckFrequency as seen); 0 otherwise."),
		seen: newCounterVec("podwatch_kubelet_relists_seen_total",
			"Full reads of the manifest folder with the kubelet's signature, by whether they fell on the known phase.",
			"on_phase"),
		lost: newCounter("podwatch_kubelet_relist_lost_total",
			"Times a known relist phase stopped: no relist for three periods."),
	}
	for _, on := range []bool{true, false} {
		r.seen.WithLabelValues(strconv.FormatBool(on))
	}
	return r
}

func (r relistMetrics) collectors() []family {
	return []family{r.known, r.period, r.seen, r.lost}
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
