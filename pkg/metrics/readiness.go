package metrics

import (
	"fmt"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// Readiness reasons, the first line of a 503 from /readyz.
const (
	NotReadyFirstList = "first list not done"
	NotReadyWatchDown = "watch down"
	NotReadyStandby   = "standby"
)

// readiness is derived from the snapshots seen; Metrics.mu guards it.
type readiness struct {
	disabled bool
	listed   bool // a Relist snapshot was seen
	observed bool // any snapshot was seen: watch is meaningful
	watch    types.WatchStatus
	// notPersisted says why the published state is not on disk; empty
	// when it is. Ready either way, with the reason in the body.
	notPersisted string
	// standby says who holds the state dir while another podwatch does;
	// empty when this one works.
	standby string
}

// observe records s and reports whether the watch came back up after
// being seen down (a restart). The watch's first start is no restart.
func (r *readiness) observe(s types.Snapshot) (restarted bool) {
	restarted = r.observed && !r.watch.Up && s.Watch.Up
	r.observed = true
	r.listed = r.listed || s.Relist
	r.watch = s.Watch
	return restarted
}

// status says ready, or why not, at now. Without the watch podwatch still
// lists every --file-check-frequency, but it can lag the kubelet (which
// reacts to inotify) by that much, so it is not ready.
func (r *readiness) status(now time.Time) (bool, string) {
	switch {
	case r.disabled:
		return true, "ok: static pods are disabled in the kubelet config"
	case r.standby != "":
		return false, NotReadyStandby + ": " + r.standby
	case !r.listed:
		return false, NotReadyFirstList
	case !r.watch.Up:
		msg := NotReadyWatchDown
		if r.watch.Err != nil {
			msg += ": " + r.watch.Err.Error()
		}
		if !r.watch.RetryAt.IsZero() {
			msg += "; " + retryWords(r.watch.RetryAt.Sub(now))
		}
		return false, msg
	}
	if r.notPersisted != "" {
		return true, "ok; " + r.notPersisted + " (a restart announces again what changed since the state was last saved)"
	}
	return true, "ok"
}

// retryWords says when the next retry is, d from now, in whole seconds
// rounded up: a probe read by a person says "in 1s" for a retry that is
// under a second away, never "in 0s".
func retryWords(d time.Duration) string {
	if d <= 0 {
		return "retrying now"
	}
	return fmt.Sprintf("retrying in %v", (d + time.Second - 1).Truncate(time.Second))
}
