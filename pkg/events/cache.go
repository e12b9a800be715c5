package events

import (
	"time"

	"k8s.io/utils/lru"
)

// ttlCache is a size-capped LRU whose entries also expire after ttl without a
// touch. k8s.io/utils/lru enforces the cap but cannot show its oldest entry,
// so the cache threads its own list through the nodes in the same touch
// order; expiry walks that list from the idle end. Not safe for concurrent
// use: the Recorder's mutex guards it.
type ttlCache[K comparable, V any] struct {
	lru  *lru.Cache
	ttl  time.Duration
	head *node[K, V] // most recently touched
	tail *node[K, V] // least recently touched
	// expiring is set while the cache itself removes an idle node, so the
	// eviction callback can tell expiry from the size cap.
	expiring bool
	// moving is set while rekey takes a node out to put it back under
	// another key: that is no eviction.
	moving  bool
	onEvict func(v V, expired bool)
}

type node[K comparable, V any] struct {
	key        K
	val        V
	seen       time.Time
	prev, next *node[K, V]
}

func newTTLCache[K comparable, V any](size int, ttl time.Duration, onEvict func(v V, expired bool)) *ttlCache[K, V] {
	c := &ttlCache[K, V]{ttl: ttl, onEvict: onEvict}
	c.lru = lru.NewWithEvictionFunc(size, c.evicted)
	return c
}

func (c *ttlCache[K, V]) evicted(_ lru.Key, v any) {
	n := v.(*node[K, V])
	c.unlink(n)
	if c.onEvict != nil && !c.moving {
		c.onEvict(n.val, c.expiring)
	}
}

// get returns the value for k and marks it seen at now. An entry idle for
// more than ttl is removed and reported missing.
func (c *ttlCache[K, V]) get(k K, now time.Time) (V, bool) {
	v, ok := c.lru.Get(k)
	if !ok {
		var zero V
		return zero, false
	}
	n := v.(*node[K, V])
	if now.Sub(n.seen) > c.ttl {
		c.expire(n)
		var zero V
		return zero, false
	}
	n.seen = now
	c.unlink(n)
	c.pushFront(n)
	return n.val, true
}

// add stores v under k, seen at seen; it may evict the least recently
// touched entry. Callers add only keys that get just missed.
func (c *ttlCache[K, V]) add(k K, v V, seen time.Time) {
	n := &node[K, V]{key: k, val: v, seen: seen}
	c.pushFront(n)
	c.lru.Add(k, n)
}

// sweep removes up to limit entries idle for more than ttl at now and reports
// how many it removed. Touch order is seen order, so it stops at the first
// fresh entry.
func (c *ttlCache[K, V]) sweep(now time.Time, limit int) int {
	removed := 0
	for c.tail != nil && removed < limit && now.Sub(c.tail.seen) > c.ttl {
		c.expire(c.tail)
		removed++
	}
	return removed
}

func (c *ttlCache[K, V]) expire(n *node[K, V]) {
	c.expiring = true
	c.lru.Remove(n.key)
	c.expiring = false
}

// rekey moves the value under from to to, seen at now.
func (c *ttlCache[K, V]) rekey(from, to K, now time.Time) {
	v, ok := c.lru.Get(from)
	if !ok {
		return
	}
	c.moving = true
	c.lru.Remove(from)
	c.moving = false
	c.add(to, v.(*node[K, V]).val, now)
}

func (c *ttlCache[K, V]) len() int { return c.lru.Len() }

func (c *ttlCache[K, V]) pushFront(n *node[K, V]) {
	n.prev, n.next = nil, c.head
	if c.head != nil {
		c.head.prev = n
	}
	c.head = n
	if c.tail == nil {
		c.tail = n
	}
}

func (c *ttlCache[K, V]) unlink(n *node[K, V]) {
	if n.prev != nil {
		n.prev.next = n.next
	} else if c.head == n {
		c.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else if c.tail == n {
		c.tail = n.prev
	}
	n.prev, n.next = nil, nil
}
