package events

import (
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// An Event restored without AnnotationKey was written by a release that
// keyed Events by their message. Its key cannot be rebuilt, so the first
// keyed occurrence of its reason, object and file (as far as these can be
// told) continues it: an upgrade continues the Events it finds rather than
// opening new ones beside them. Its exact message is the best match; then
// the newest such Event.

// unkeyedEvent is a restored Event without a key, by where it is cached.
type unkeyedEvent struct {
	key     eventKey
	message string
}

// unkeyed notes restored Event ev, cached under key, as one to continue.
func (r *Recorder) unkeyed(gk groupKey, key eventKey, ev *v1.Event) {
	gk.file = unkeyedFile(ev)
	if r.legacy == nil {
		r.legacy = map[groupKey][]unkeyedEvent{}
	}
	r.legacy[gk] = append(r.legacy[gk], unkeyedEvent{key: key, message: ev.Message})
}

// unkeyedFile is the file an Event without a key is about, where it can
// be told: its AnnotationFile, or the file an ADD or UPDATE message starts
// with.
func unkeyedFile(ev *v1.Event) string {
	if f := ev.Annotations[AnnotationFile]; f != "" {
		return f
	}
	if ev.Reason != types.ReasonAdded && ev.Reason != types.ReasonUpdated {
		return ""
	}
	f, _, ok := strings.Cut(ev.Message, ": ")
	if !ok || strings.ContainsAny(f, " /") {
		return ""
	}
	return f
}

// continued finds the Event keyed occurrence o (of group gk) continues
// among the restored Events without a key, and caches it under key from
// now on; nil when there is none.
func (r *Recorder) continued(gk groupKey, key eventKey, o *Occurrence, now time.Time) *entry {
	if len(r.legacy) == 0 || o.Key == "" {
		return nil
	}
	for _, file := range []string{o.File, ""} {
		lk := gk
		lk.file = file
		cands := r.legacy[lk]
		if len(cands) == 0 {
			continue
		}
		i := len(cands) - 1 // restored oldest first: the newest
		for j, c := range cands {
			if c.message == o.Message {
				i = j
			}
		}
		c := cands[i]
		if rest := append(cands[:i:i], cands[i+1:]...); len(rest) > 0 {
			r.legacy[lk] = rest
		} else {
			delete(r.legacy, lk)
		}
		e, ok := r.events.get(c.key, now)
		if !ok {
			continue // gone from the cache since: nothing to continue
		}
		r.events.rekey(c.key, key, now)
		e.key = o.Key
		return e
	}
	return nil
}
