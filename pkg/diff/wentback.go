package diff

import (
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// A shadowed file written, then the kubelet's relist, then the file
// written again before podwatch takes that relist in (it waits a moment
// for the kubelet's sync loop): the kubelet ran the pod from the written
// file, from the winner at the relist, and from the written file again,
// but podwatch took the second write in before the relist and said it as
// one restart from the first. The relist's own restart is said when the
// relist is taken in (kubeletView.wentBack): an UPDATE event that leaves
// the published pod as it is, since the watch has moved on from it, and
// that nobody follows to the runtime, since that pod ran only a moment.

// wentBack says each pod a relist taken in now ran from another file
// between two watch events, once: a recheck steps the same snapshot
// again, which leaves the view's note in place.
func (c *computation) wentBack() {
	if len(c.kv.wentBack) == 0 {
		return // the sort's iterator would allocate on every step
	}
	for _, key := range slices.Sorted(maps.Keys(c.kv.wentBack)) {
		w := c.kv.wentBack[key]
		delete(c.kv.wentBack, key)
		p, ok := c.next.Pods[key]
		if !ok {
			continue
		}
		// Not a change of the published pod (no Op), but an UPDATE the
		// kubelet made: its claim says so.
		c.claimFresh()
		c.cl.relist = true
		c.emit(types.Change{
			Claim: c.claimOf(types.OpUpdate, false),
			Type:  v1.EventTypeNormal, Reason: types.ReasonUpdated, Object: podObject(key), File: w.file, At: w.at,
			Key:     transition(types.ReasonUpdated, w.file, "watch:"+w.then, p.identity()),
			Message: fmt.Sprintf("%s: the kubelet's relist ran the pod from it again between two watch events that ran it from %s: one more restart (new UID)", w.file, w.then),
			Detail: fmt.Sprintf("%s: the kubelet's relist at %s ran pod %s from %s again, the last file in sort order that defines it, after its watch had run it from %s and before it took that file's next write in: it gave the pod a new UID and restarted it, a restart between the two podwatch said as one",
				w.file, w.at.UTC().Format(time.RFC3339Nano), key, w.file, w.then),
		})
	}
}
