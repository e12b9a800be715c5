package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/published"
	"github.com/podwatch/podwatch/pkg/types"
)

// stateWarnAfter is how many save attempts in a row must fail before the
// Node is told: the first try and two retries, about three seconds. One
// failed write can be a blip; three with backoff between them is a disk
// that stays full or broken, which the operator must hear about beyond a
// log line and a gauge.
const stateWarnAfter = 3

// stateAlarm turns the persister's save results into the gauge (every
// result), a StateNotPersisted Node Warning once per failing spell (at the
// stateWarnAfter-th failure in a row) and a StatePersisted Normal Event
// when the state is saved again after it. The persister's goroutine alone
// calls status.
type stateAlarm struct {
	ctx     context.Context // for Record; outlives the agent's cancel
	rec     *events.Recorder
	log     *slog.Logger
	metrics *metrics.Metrics
	node    string
	dir     string

	failures int  // failed attempts in a row
	warned   bool // the Warning of this spell is out
}

func (a *stateAlarm) status(saved bool, err error) {
	a.metrics.SetStatePersisted(saved, err)
	if saved {
		if a.warned {
			a.record(events.Occurrence{
				Object: events.NodeRef(a.node), Type: v1.EventTypeNormal, Reason: types.ReasonStatePersisted,
				Message: fmt.Sprintf("the published state is saved in --state-dir %s again, after %d failed attempts", a.dir, a.failures),
			})
		}
		a.failures, a.warned = 0, false
		return
	}
	a.failures++
	if a.warned || a.failures < stateWarnAfter {
		return
	}
	a.warned = true
	a.record(events.Occurrence{
		Object: events.NodeRef(a.node), Type: v1.EventTypeWarning, Reason: types.ReasonStateNotPersisted,
		Message: fmt.Sprintf("cannot save the published state in --state-dir %s (%s): failed %d times in a row, retrying at least every %s; until it is saved, a restart announces again what changed since the last save",
			a.dir, firstLine(err), a.failures, published.RetryMax),
	})
}

func (a *stateAlarm) record(o events.Occurrence) {
	if err := a.rec.Record(a.ctx, o); err != nil {
		a.log.Error("writing event failed", "reason", o.Reason, "err", err)
	}
}

// firstLine is err's first line (errors.Join puts one error a line), with
// how many more there are.
func firstLine(err error) string {
	if err == nil {
		return "unknown error"
	}
	first, rest, more := strings.Cut(err.Error(), "\n")
	if !more {
		return first
	}
	return fmt.Sprintf("%s; and %d more", first, strings.Count(rest, "\n")+1)
}
