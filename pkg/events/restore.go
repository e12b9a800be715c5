package events

import (
	"hash/maphash"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// restore seeds the cache with the Events of a previous run, so that an
// InvalidManifest at count 7 continues at 8 under the same name. It assumes
// every delivered sink has them: the next write is an update, and a sink
// that lost the Event re-creates it (see Sink). Events of another host or
// component, or idle past the TTL, are skipped: the API has dropped those,
// and a new occurrence deserves a new Event. Aggregation groups still
// active at now are rebuilt too, so a flood that began before a restart is
// still combined after it.
func (r *Recorder) restore(evs []v1.Event, now time.Time) {
	keep := make([]*v1.Event, 0, len(evs))
	for i := range evs {
		ev := &evs[i]
		if ev.Source.Component != Component || ev.Source.Host != r.opts.Host ||
			ev.Count < 1 || ev.Name == "" || now.Sub(ev.LastTimestamp.Time) > r.opts.TTL {
			continue
		}
		keep = append(keep, ev)
	}
	// Oldest first, so that the cache's size cap keeps the newest.
	slices.SortStableFunc(keep, func(a, b *v1.Event) int {
		return a.LastTimestamp.Compare(b.LastTimestamp.Time)
	})
	seqs := map[objectKey]uint64{}
	for _, ev := range keep {
		r.restoreOne(ev, now, seqs)
	}
}

// restoreOne restores ev; seqs holds, per object, the newest change the
// Events restored so far carry, so that the object's replay candidate is
// the last change counted for it, whichever of its Events holds it.
func (r *Recorder) restoreOne(ev *v1.Event, now time.Time, seqs map[objectKey]uint64) {
	o := Occurrence{Object: ev.InvolvedObject, Type: ev.Type, Reason: ev.Reason, Message: ev.Message, Key: ev.Annotations[AnnotationKey]}
	o.Object.ResourceVersion = ""
	if fileScoped(ev.Reason) {
		o.File = ev.Annotations[AnnotationFile]
	}
	gk := groupKeyOf(&o)
	_, combined := strings.CutPrefix(ev.Message, CombinedPrefix)
	key := plainKey(gk, &o)
	if combined {
		key = combinedKey(gk)
	}
	last := ev.LastTimestamp.Time
	e := &entry{
		object:  o.Object,
		typ:     ev.Type,
		reason:  ev.Reason,
		message: ev.Message,
		detail:  ev.Annotations[AnnotationDetail],
		name:    ev.Name,
		first:   ev.FirstTimestamp.Time,
		last:    last,
		count:   ev.Count,
		key:     o.Key,
		claim:   ev.Annotations[AnnotationClaim],
	}
	if fileScoped(ev.Reason) {
		e.file = o.File
	}
	if e.first.IsZero() {
		e.first = last
	}
	if seq, change, ok := parseChangeMark(ev.Annotations[AnnotationChange]); ok {
		e.change, e.mark = change, ev.Annotations[AnnotationChange]
		r.changeSeq = max(r.changeSeq, seq)
		k := objectKeyOf(&o)
		if best, had := seqs[k]; !had || seq > best {
			seqs[k] = seq
			if r.replays == nil {
				r.replays = map[objectKey]string{}
			}
			r.replays[k] = change
		}
	}
	r.attachSlots(e)
	for i := range e.slots {
		e.slots[i].acked = ev.Count
	}
	if old, ok := r.events.get(key, last); ok {
		// Two stored Events with one key: the later one is current.
		*old = *e
		for i := range old.slots {
			old.slots[i].e = old
		}
	} else {
		r.events.add(key, e, last)
	}
	if o.Key == "" && !combined {
		r.unkeyed(gk, key, ev)
	}
	r.lastNanos = max(r.lastNanos, nameNanos(ev.Name))

	if r.opts.AggregateMax <= 0 || now.Sub(last) > r.opts.AggregateInterval {
		return
	}
	g, ok := r.groups.get(gk, last)
	if !ok {
		g = &group{}
		r.groups.add(gk, g, last)
	}
	if g.n == 0 || e.first.Before(g.first) {
		g.first = e.first
	}
	g.n += ev.Count
	if combined {
		g.collapsed = true
		return
	}
	h := maphash.String(r.seed, identity(&o))
	if !slices.Contains(g.msgs, h) && len(g.msgs) < r.opts.AggregateMax-1 {
		g.msgs = append(g.msgs, h)
	}
}
