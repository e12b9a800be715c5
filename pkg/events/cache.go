package events

import (
	"hash/maphash"
	"time"
)

// ttlCache is a size-capped LRU whose entries also expire after ttl without a
// touch. One list, threaded through the nodes in touch order, gives both the
// entry the cap evicts and the idle end that expiry walks. The map finds a
// node by a 64-bit hash of its key rather than by the key, a struct of up to
// ten strings, so that each key is held once, in its node; nodes whose keys
// share a hash are chained, and a lookup compares the whole key. Not safe
// for concurrent use: the Recorder's mutex guards it.
type ttlCache[K comparable, V any] struct {
	m map[uint64]*node[K, V]
	// hash is maphash.Comparable under a seed of the cache's own; tests
	// make keys collide with a hash of their own.
	hash func(K) uint64
	n    int // nodes, chained ones included
	size int
	ttl  time.Duration
	head *node[K, V] // most recently touched
	tail *node[K, V] // least recently touched
	// onEvict is told of each value the cache drops, and whether it was
	// for idling past ttl (expired) or for the size cap.
	onEvict func(v V, expired bool)
}

type node[K comparable, V any] struct {
	key        K
	val        V
	seen       time.Time
	prev, next *node[K, V]
	// alias is the next node whose key has the same hash.
	alias *node[K, V]
}

func newTTLCache[K comparable, V any](size int, ttl time.Duration, onEvict func(v V, expired bool)) *ttlCache[K, V] {
	seed := maphash.MakeSeed()
	hash := func(k K) uint64 { return maphash.Comparable(seed, k) }
	return &ttlCache[K, V]{m: map[uint64]*node[K, V]{}, hash: hash, size: size, ttl: ttl, onEvict: onEvict}
}

// find returns the node of k, or nil.
func (c *ttlCache[K, V]) find(k K) *node[K, V] {
	for n := c.m[c.hash(k)]; n != nil; n = n.alias {
		if n.key == k {
			return n
		}
	}
	return nil
}

// insert puts n in the map; its key must not be there.
func (c *ttlCache[K, V]) insert(n *node[K, V]) {
	h := c.hash(n.key)
	n.alias = c.m[h]
	c.m[h] = n
	c.n++
}

// remove takes n out of the map.
func (c *ttlCache[K, V]) remove(n *node[K, V]) {
	h := c.hash(n.key)
	if first := c.m[h]; first == n {
		if n.alias == nil {
			delete(c.m, h)
		} else {
			c.m[h] = n.alias
		}
	} else {
		for p := first; p != nil; p = p.alias {
			if p.alias == n {
				p.alias = n.alias
				break
			}
		}
	}
	n.alias = nil
	c.n--
}

// get returns the value for k and marks it seen at now. An entry idle for
// more than ttl is removed and reported missing.
func (c *ttlCache[K, V]) get(k K, now time.Time) (V, bool) {
	n := c.find(k)
	if n == nil {
		var zero V
		return zero, false
	}
	if now.Sub(n.seen) > c.ttl {
		c.drop(n, true)
		var zero V
		return zero, false
	}
	n.seen = now
	c.unlink(n)
	c.pushFront(n)
	return n.val, true
}

// add stores v under k, seen at seen; past the size cap it evicts the least
// recently touched entry. Callers add only keys that get just missed.
func (c *ttlCache[K, V]) add(k K, v V, seen time.Time) {
	if old := c.find(k); old != nil {
		c.remove(old)
		c.unlink(old)
	}
	n := &node[K, V]{key: k, val: v, seen: seen}
	c.insert(n)
	c.pushFront(n)
	if c.size > 0 && c.n > c.size {
		c.drop(c.tail, false)
	}
}

// sweep removes up to limit entries idle for more than ttl at now and reports
// how many it removed. Touch order is seen order, so it stops at the first
// fresh entry.
func (c *ttlCache[K, V]) sweep(now time.Time, limit int) int {
	removed := 0
	for c.tail != nil && removed < limit && now.Sub(c.tail.seen) > c.ttl {
		c.drop(c.tail, true)
		removed++
	}
	return removed
}

// drop removes n and tells onEvict.
func (c *ttlCache[K, V]) drop(n *node[K, V], expired bool) {
	c.remove(n)
	c.unlink(n)
	if c.onEvict != nil {
		c.onEvict(n.val, expired)
	}
}

// rekey moves the value under from to to, seen at now. The move is no
// eviction: onEvict is not told.
func (c *ttlCache[K, V]) rekey(from, to K, now time.Time) {
	n := c.find(from)
	if n == nil {
		return
	}
	c.remove(n)
	c.unlink(n)
	c.add(to, n.val, now)
}

func (c *ttlCache[K, V]) len() int { return c.n }

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
