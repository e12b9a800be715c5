package events

import (
	"container/heap"
	"time"
)

// slot is one Event's delivery state at one delivered sink. It lives inside
// its entry, so queueing a write allocates nothing. Guarded by the
// Recorder's mutex.
type slot struct {
	e *entry
	// acked is the count the sink has acknowledged; 0 means it has never
	// stored the Event, so the next write is a create.
	acked int32
	// lastAttempt is when the last write of this Event to the sink began;
	// the next may begin KeyInterval later.
	lastAttempt time.Time
	// queued: occurrences are waiting for a write. inflight: a write is
	// running. Both may hold: occurrences that arrive during a write queue
	// the next one.
	queued   bool
	inflight bool
	readyAt  time.Time // earliest start of the queued write
	queuedAt time.Time // when the queued write was opened, for logs
	hidx     int       // index in queue.byReady
	seq      uint64    // queue order, to break readyAt ties first come first served
	// older and newer link queued slots in the order they were queued; the
	// pending bound drops from the old end.
	older, newer *slot
}

// queue holds one delivered sink's queued writes: a min-heap by readyAt to
// find the next one to send, and a list by queue order to find the one to
// drop.
type queue struct {
	byReady        readyHeap
	oldest, newest *slot
	seq            uint64 // of the last push
}

func (q *queue) len() int { return len(q.byReady) }

// push queues s as the newest write.
func (q *queue) push(s *slot) {
	q.seq++
	s.seq = q.seq
	heap.Push(&q.byReady, s)
	s.older, s.newer = q.newest, nil
	if q.newest != nil {
		q.newest.newer = s
	}
	q.newest = s
	if q.oldest == nil {
		q.oldest = s
	}
}

// pushOldest queues s as the oldest write: a retried write has waited
// longest, so it is the first the pending bound drops.
func (q *queue) pushOldest(s *slot) {
	heap.Push(&q.byReady, s)
	s.older, s.newer = nil, q.oldest
	if q.oldest != nil {
		q.oldest.older = s
	}
	q.oldest = s
	if q.newest == nil {
		q.newest = s
	}
}

// next returns the write that may start first, or nil.
func (q *queue) next() *slot {
	if len(q.byReady) == 0 {
		return nil
	}
	return q.byReady[0]
}

func (q *queue) remove(s *slot) {
	heap.Remove(&q.byReady, s.hidx)
	if s.older != nil {
		s.older.newer = s.newer
	} else {
		q.oldest = s.newer
	}
	if s.newer != nil {
		s.newer.older = s.older
	} else {
		q.newest = s.older
	}
	s.older, s.newer = nil, nil
	s.hidx = -1
}

// delay moves s's start to at if that is later.
func (q *queue) delay(s *slot, at time.Time) {
	if at.After(s.readyAt) {
		s.readyAt = at
		heap.Fix(&q.byReady, s.hidx)
	}
}

type readyHeap []*slot

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if c := h[i].readyAt.Compare(h[j].readyAt); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx = i
	h[j].hidx = j
}
func (h *readyHeap) Push(x any) {
	s := x.(*slot)
	s.hidx = len(*h)
	*h = append(*h, s)
}
func (h *readyHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return s
}
