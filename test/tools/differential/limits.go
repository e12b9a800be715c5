package differential

import (
	"context"
	"fmt"
	"time"
)

const (
	node = "node-1"
	// Both sides list the folder every second, podwatch settles bad news
	// for 200ms: short, so a relist step and a REMOVE cost little, and
	// far above the time one step takes.
	relistPeriod = time.Second
	settleDelay  = 200 * time.Millisecond
	// waitLimit bounds each wait for a side in the child, for a loaded
	// 2-core machine; a passing run never comes near it.
	waitLimit = 20 * time.Second
	// childLimit bounds a whole child.
	childLimit = 90 * time.Second
)

// awaitWatches returns once the folder has more inotify watches than
// before: the kubelet's watch is up.
func awaitWatches(ctx context.Context, dir string, before int) error {
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := dirWatches(dir)
		if err != nil {
			return err
		}
		if n > before {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the kubelet's watch on %s: not within %v", dir, waitLimit)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
