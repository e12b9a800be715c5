package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/podwatch/podwatch/pkg/metrics"
	"github.com/podwatch/podwatch/pkg/store"
)

// standbyPoll is how often a standby tries the state dir's lock: it takes
// over within about this long of the holder's stop.
const standbyPoll = time.Second

// errStandbyEnded: the agent was stopped while it stood by.
var errStandbyEnded = errors.New("stopped while standing by")

// openState opens the state dir, as openStore does. While another podwatch
// holds it (a systemd unit and a DaemonSet on one node, say), the agent is
// a standby: it is not ready, /readyz naming the holder, and announces
// nothing, having built nothing that could; it does not exit either, which
// would only loop under systemd or crash-loop in a DaemonSet. Once the lock
// is free it takes over, loading the state the holder published, so that
// nothing unchanged is announced. It returns errStandbyEnded when ctx ends
// first.
func (a *Agent) openState(ctx context.Context, m *metrics.Metrics) (*store.Store, error, error) {
	dir, log := a.opts.StateDir, a.env.Log
	for {
		st, inMemory := openStore(dir, a.opts.PodName, a.env.Clock, log)
		var locked *store.LockedError
		if !errors.As(inMemory, &locked) {
			m.SetStandby("")
			return st, inMemory, nil
		}
		holder := locked.Holder.String()
		if holder == "" {
			holder = "which its lock file does not say"
		}
		if errors.Is(inMemory, syscall.EROFS) || errors.Is(inMemory, fs.ErrPermission) {
			// A holder that cannot write the lock file leaves the last
			// writer's name in it.
			holder = "as last recorded: " + holder + "; the folder is read-only, so the holder may be a later one"
		}
		m.SetStandby(fmt.Sprintf("--state-dir %s is held by another podwatch (%s); taking over when it stops", dir, holder))
		log.Warn("another podwatch holds --state-dir: standing by, announcing nothing, until it stops",
			"stateDir", dir, "holder", holder)
		if err := store.AwaitLock(ctx, dir, a.env.Clock, standbyPoll); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errStandbyEnded, err)
		}
		log.Info("--state-dir is free: taking over", "stateDir", dir)
	}
}
