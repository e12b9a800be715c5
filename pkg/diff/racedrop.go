package diff

import (
	"fmt"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A write the relist detector places on both sides of the relist's read
// of a file (types.RelistWrite with Before and After) may have been read
// by that relist or not: the relist read one of the writes, a part, or
// the content from before them. When the content podwatch read after it
// drops the pod, that relist may have kept it, and the next relist is
// the one that stops it (the real kubelet, a clean-clone CI run's
// invalid-across-relist: the write came 10 ms after the relist's read,
// which got the valid content, and the next relist, held up 3 s, stopped
// the pod). The REMOVE said at the relist taken in names both relists
// and says the kubelet may skip it, as the ADD of a fix before the next
// relist does: it may never have stopped the pod. Said when the next
// relist comes instead, it would be a period late whenever the first one
// read the write.

// racedDrop is a pod a relist may have dropped for a file written on
// both sides of its read: the file, and the relist's folder open.
type racedDrop struct {
	file string
	at   time.Time
	// removeID is the claim of the REMOVE said for it, which the ADD of
	// the fix goes with; 0 until said.
	removeID uint64
}

// racedDrops is, per key the store before a relist (old) gave a file
// the relist's store (now) no longer gives the pod, written on both sides
// of the relist's read of it, that drop; nil for none.
func racedDrops(old, now map[string]string, written map[string]types.RelistWrite, at time.Time) map[string]racedDrop {
	var out map[string]racedDrop
	if len(written) == 0 {
		return nil // most relists: no store walk on each
	}
	for key, name := range old {
		w, ok := written[name]
		if _, kept := now[key]; kept || !ok || !w.Before || !w.After {
			continue
		}
		if out == nil {
			out = map[string]racedDrop{}
		}
		out[key] = racedDrop{file: name, at: at}
	}
	return out
}

// racedRemove is what a REMOVE of key, dropped for file's content, says
// the kubelet does, when the relist taken in may have read file before
// its write; "" otherwise.
func (c *computation) racedRemove(key, file string) string {
	r, ok := c.kv.raced[key]
	if !ok || r.file != file || c.estimated {
		return ""
	}
	return fmt.Sprintf("the kubelet stopped it at its relist at %s if that relist read the write, which came as it read %s (a race podwatch cannot see); if it read the content from before, it stops it at its next relist instead, and never if the file is fixed first: the kubelet may skip this restart",
		r.at.UTC().Format(time.RFC3339Nano), file)
}

// racedRemoved notes id, the claim of the REMOVE racedRemove worded.
func (c *computation) racedRemoved(key string, id uint64) {
	if r, ok := c.kv.raced[key]; ok {
		r.removeID = id
		c.kv.raced[key] = r
	}
}

// racedStart is what an ADD of key from the file name says the kubelet
// does after a REMOVE racedRemove worded; "" for any other ADD.
func (c *computation) racedStart(key, name string) string {
	r, ok := c.kv.raced[key]
	if !ok || r.file != name {
		return ""
	}
	return fmt.Sprintf("the kubelet's watch starts it again if its relist at %s dropped it; if that relist read %s from before the write, it never stopped the pod, and the kubelet may skip this restart",
		r.at.UTC().Format(time.RFC3339Nano), name)
}
