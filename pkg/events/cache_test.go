package events

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestIdleEventExpiresAfterTTL(t *testing.T) {
	out := &fakeSink{}
	r, clk := newTest(t, Options{TTL: time.Hour}, []Registration{StreamTo("out", out)}, nil)
	o := occ("WatchDegraded", "inotify limit reached")
	mustRecord(t, r, o)
	clk.Step(time.Hour) // exactly the TTL: still the same Event
	mustRecord(t, r, o)
	clk.Step(time.Hour + time.Nanosecond)
	mustRecord(t, r, o)
	ws := out.got()
	if ws[1].ev.Name != ws[0].ev.Name || ws[1].ev.Count != 2 {
		t.Fatalf("repeat at the TTL: %s x%d, want %s x2", ws[1].ev.Name, ws[1].ev.Count, ws[0].ev.Name)
	}
	if ws[2].ev.Name == ws[0].ev.Name || ws[2].ev.Count != 1 {
		t.Fatalf("repeat past the TTL: %s x%d, want a new Event x1", ws[2].ev.Name, ws[2].ev.Count)
	}
	if st := r.Stats(); st.Expired != 1 || st.Events != 1 {
		t.Fatalf("stats %+v, want 1 expired, 1 Event", st)
	}
}

func TestIdleEventsAreSweptWithoutLookup(t *testing.T) {
	r, clk := newTest(t, Options{TTL: time.Minute, AggregateMax: -1}, nil, nil)
	for i := range 100 {
		mustRecord(t, r, occ("WatchDegraded", string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	clk.Step(2 * time.Minute)
	mustRecord(t, r, occ("Other", "x"))
	mustRecord(t, r, occ("Other", "x"))
	// One sweep forgets at most sweepBatch; two Records cover 100 idle ones.
	if st := r.Stats(); st.Events != 1 || st.Expired != 100 {
		t.Fatalf("stats %+v, want the 100 idle Events swept", st)
	}
}

func TestSizeCapEvictsLeastRecentlySeen(t *testing.T) {
	out := &fakeSink{}
	r, _ := newTest(t, Options{CacheSize: 2, AggregateMax: -1}, []Registration{StreamTo("out", out)}, nil)
	a, b, c := occ("R", "a"), occ("R", "b"), occ("R", "c")
	mustRecord(t, r, a)
	mustRecord(t, r, b)
	mustRecord(t, r, a) // a is now the most recent
	mustRecord(t, r, c) // evicts b
	mustRecord(t, r, a)
	mustRecord(t, r, b)
	ws := out.got()
	if ws[4].ev.Count != 3 {
		t.Fatalf("a after c: x%d, want x3 (a must survive)", ws[4].ev.Count)
	}
	if ws[5].ev.Count != 1 || ws[5].ev.Name == ws[1].ev.Name {
		t.Fatalf("b after eviction: %s x%d, want a new Event", ws[5].ev.Name, ws[5].ev.Count)
	}
	if st := r.Stats(); st.Evicted != 2 || st.Events != 2 {
		t.Fatalf("stats %+v, want 2 evicted (b, then c), 2 Events", st)
	}
}

func TestEvictedPendingWritesAreStillDelivered(t *testing.T) {
	api := &fakeSink{}
	r, _ := newTest(t, Options{CacheSize: 1}, []Registration{DeliverTo("api", api)}, nil)
	for range 3 {
		mustRecord(t, r, occ("R", "a"))
	}
	mustRecord(t, r, occ("R", "b")) // evicts a, whose write is pending
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := lastByName(api.got())
	if len(evs) != 2 {
		t.Fatalf("delivered %d Events, want 2", len(evs))
	}
	var total int32
	for _, w := range evs {
		total += w.ev.Count
	}
	if total != 4 || r.Stats().Evicted != 1 {
		t.Fatalf("delivered counts sum to %d, want 4", total)
	}
	checkBalance(t, r, "api")
}

// Keys whose hashes collide are told apart by the whole key: the cache
// behaves as with distinct hashes, whichever node of a chain is touched,
// evicted, expired or moved.
func TestCacheKeysSharingAHash(t *testing.T) {
	var evicted, expired []string
	c := newTTLCache[string, string](3, time.Minute, func(v string, exp bool) {
		if exp {
			expired = append(expired, v)
		} else {
			evicted = append(evicted, v)
		}
	})
	c.hash = func(string) uint64 { return 7 }
	now := t0
	for _, k := range []string{"a", "b", "c"} {
		c.add(k, "v"+k, now)
	}
	if v, ok := c.get("a", now); !ok || v != "va" {
		t.Fatalf("get a = %q, %v; want va", v, ok)
	}
	c.add("d", "vd", now) // b is the least recently touched now
	if _, ok := c.get("b", now); ok || len(evicted) != 1 || evicted[0] != "vb" {
		t.Fatalf("after the cap: b still there or evicted %v, want [vb]", evicted)
	}
	c.rekey("c", "e", now)
	if _, ok := c.get("c", now); ok {
		t.Fatal("c still found after rekey to e")
	}
	if v, ok := c.get("e", now); !ok || v != "vc" {
		t.Fatalf("get e = %q, %v; want vc", v, ok)
	}
	if c.len() != 3 || len(c.m) != 1 {
		t.Fatalf("len %d in %d map slots, want 3 in 1", c.len(), len(c.m))
	}
	now = now.Add(2 * time.Minute)
	c.add("f", "vf", now) // past the cap again: a goes, touched before d and e
	if n := c.sweep(now, 10); n != 2 || c.len() != 1 {
		t.Fatalf("sweep removed %d, %d left; want 2 removed, 1 left", n, c.len())
	}
	if v, ok := c.get("f", now); !ok || v != "vf" {
		t.Fatalf("get f = %q, %v; want vf", v, ok)
	}
	if fmt.Sprint(evicted, expired) != "[vb va] [vd vc]" {
		t.Fatalf("evicted %v, expired %v; want [vb va] and [vd vc]", evicted, expired)
	}
}
