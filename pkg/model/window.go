package model

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A window is the inputs since a base state that every way agrees on: a
// caller explores the window from the base, and folds it into the base
// once its ways meet again, so that neither grows without bound.

// Identity is what Kubelet.Running and End.Runs say of a pod that runs p.
func (p Pod) Identity() string { return p.identity() }

// Clone is a copy of k that shares nothing a later input changes.
func (k *Kubelet) Clone() *Kubelet { return k.clone() }

// Pod is the pod the merge holds for key, as Running names it.
func (k *Kubelet) Pod(key string) (Pod, bool) { return k.held(key) }

// KeyOf is the key the file source's fileKeyMapping holds for path: that
// of the pod the file last gave the store.
func (s *FileSource) KeyOf(path string) (string, bool) {
	key, ok := s.fileKeyMapping[path]
	return key, ok
}

// PathsOf are the paths the file source's fileKeyMapping gives key.
func (s *FileSource) PathsOf(key string) []string {
	var out []string
	for path, k := range s.fileKeyMapping {
		if k == key {
			out = append(out, path)
		}
	}
	return out
}

// Stored is the pod the file source's store holds for key.
func (s *FileSource) Stored(key string) (Pod, bool) {
	p, ok := s.store[key]
	return p, ok
}

// Replay is k after inputs as podwatch's own view has them (every first
// choice, every relist where it stands), k left as it is.
func Replay(k *Kubelet, inputs []Input) *Kubelet {
	p := start(k)
	for _, in := range inputs {
		p = p.first(in)
	}
	return p.k
}

// ReplayEach is Replay after each of the inputs in turn: the i-th is k
// after inputs[:i+1], k left as it is.
func ReplayEach(k *Kubelet, inputs []Input) []*Kubelet {
	out := make([]*Kubelet, len(inputs))
	p := start(k)
	for i, in := range inputs {
		// A copy of each state, which the next input would change in
		// place.
		p = p.clone().first(in)
		out[i] = p.k
	}
	return out
}

// Unwatched says the kubelet's watch ended with its folder: only its
// relists take changes in from then on.
func (t *Timeline) Unwatched() bool { return t.unwatched }

// Take feeds k the inputs as podwatch's own view has them, in place:
// the fold of a window whose ways agree. It costs what the kubelet's own
// file source does, with no copy of k.
func (k *Kubelet) Take(inputs []Input) {
	for _, in := range inputs {
		var u *Update
		switch {
		case in.Relist != nil:
			entries, read := reader(in.Relist, make([]int, len(in.Relist.Files)))
			u, _ = k.Source.ListConfig(!in.Relist.Missing, entries, read)
		case in.Event != nil:
			var o Outcome
			if len(in.Reads) > 0 {
				o = in.Reads[0]
			}
			u, _ = k.Source.ConsumeWatchEvent(*in.Event, func(string) (Pod, error) { return o.get() })
		}
		if u != nil {
			k.Storage.MergeAt(u, in.At)
		}
	}
}

// Agreed says every way of every part ends in the same kubelet state:
// the window can be folded into its base, keeping podwatch's own view.
func (e *Explored) Agreed() bool {
	for _, part := range e.Parts {
		if len(part.Ends) == 1 {
			continue // one way: nothing to tell apart
		}
		var first string
		for i, end := range part.Ends {
			var b strings.Builder
			end.Kubelet.fingerprint(&b)
			if i == 0 {
				first = b.String()
			} else if b.String() != first {
				return false
			}
		}
	}
	return !e.Capped
}

// ExploreTouched is Explore of the keys the inputs may touch alone, the
// rest of k's folder standing as one pod, as a part sees it: one watch
// event in a large folder then costs what it touches. A relist among the
// inputs lists every file, and the whole of k is explored but for the
// keys it leaves still (stillKeys). The result keeps the narrowed k for
// ReplayEachTouched.
func ExploreTouched(k *Kubelet, inputs []Input, max int) *Explored {
	n := k.touchedBy(inputs)
	e := Explore(n, inputs, max)
	e.from = n
	return e
}

// ReplayEachTouched is ReplayEach of the keys the inputs may touch alone,
// from the state e, their ExploreTouched from k, started from, and that
// state: what each says of a key the inputs touch, Running says as of
// the whole k. An e from Explore narrows k again.
func ReplayEachTouched(k *Kubelet, e *Explored, inputs []Input) (*Kubelet, []*Kubelet) {
	n := e.from
	if n == nil {
		n = k.touchedBy(inputs)
	}
	return n, ReplayEach(n, inputs)
}

// touchedBy is k narrowed to the keys the inputs may touch, or k itself
// when a relist among them lists every file.
func (k *Kubelet) touchedBy(inputs []Input) *Kubelet {
	touched := map[string]bool{}
	for _, in := range inputs {
		if in.Event == nil {
			return k
		}
		if key, ok := k.Source.fileKeyMapping[in.Event.Path]; ok {
			touched[key] = true
		}
		for _, o := range in.Reads {
			if o.Pod != nil {
				touched[o.Pod.Key] = true
			}
		}
	}
	if len(touched) > 0 && len(k.Source.store) != len(k.Storage.pods) {
		// The store holds pods the merge does not run (an empty relist
		// kept them): an event that sends the store starts them again.
		running := make(map[string]bool, len(k.Storage.pods))
		for _, p := range k.Storage.pods {
			running[p.Key] = true
		}
		for key := range k.Source.store {
			if !running[key] {
				touched[key] = true
			}
		}
	}
	// k with the keys touched, the mapping of the inputs' paths, and the
	// rest standing as one pod.
	n := k.only(slices.Collect(maps.Keys(touched)), func(key string) bool { return touched[key] })
	for _, in := range inputs {
		if key, ok := k.Source.fileKeyMapping[in.Event.Path]; ok {
			n.Source.fileKeyMapping[in.Event.Path] = key
		}
	}
	return n
}

// only is k's store and merge for keys (in says a key is one of them)
// alone, the rest standing as one pod; its mapping holds the rest's path
// alone.
func (k *Kubelet) only(keys []string, in func(key string) bool) *Kubelet {
	n := NewKubelet()
	n.Storage.seen, n.Storage.strays = k.Storage.seen, k.Storage.strays
	for _, key := range keys {
		if p, ok := k.Source.store[key]; ok {
			n.Source.store[key] = p
		}
	}
	if len(k.Source.store) > len(n.Source.store) {
		n.Source.store[restKey] = restPod
		n.Source.fileKeyMapping[restPath] = restKey
	}
	rest := false
	if k.Storage.strays {
		for uid, p := range k.Storage.pods {
			if in(p.Key) {
				n.Storage.pods[uid] = p
			} else {
				rest = true
			}
		}
	} else {
		// One pod per key, each found by its key (held).
		for _, key := range keys {
			if p, ok := k.held(key); ok {
				n.Storage.pods[p.UID] = p
			}
		}
		rest = len(k.Storage.pods) > len(n.Storage.pods)
	}
	if rest {
		n.Storage.pods[restPod.UID] = restPod
	}
	return n
}

// Clone is a copy of t that a later Add of either leaves the other as it
// was.
func (t *Timeline) Clone() *Timeline {
	c := *t
	c.inputs = slices.Clone(t.inputs)
	c.open = slices.Clone(t.open)
	c.starts = slices.Clone(t.starts)
	for i, o := range c.open {
		c.open[i] = slices.Clone(o)
	}
	return &c
}

// Fold drops the inputs, which the caller has folded into its base: the
// files last seen and the last relist taken in stay, for the next Add.
// The reads just folded can no longer be widened by a later snapshot.
func (t *Timeline) Fold() {
	t.inputs, t.open, t.from = nil, nil, t.files
	t.starts = nil
}

// ReadFrom is the index of the first input of the first snapshot that
// brought an event read after at: a relist of the kubelet's still to be
// taken in that opened the folder at at may come before that event, and
// the kubelet took in that snapshot's events one by one after the ones
// before it. len(Inputs()) for none.
func (t *Timeline) ReadFrom(at time.Time) int {
	i := slices.IndexFunc(t.inputs, func(in Input) bool { return in.Event != nil && in.seen.After(at) })
	if i < 0 {
		return len(t.inputs)
	}
	snap := t.inputs[i].snap
	return slices.IndexFunc(t.inputs, func(in Input) bool { return in.Event != nil && in.snap == snap })
}

// FoldTo drops the first n inputs, which the caller has folded into its
// base, where n is ReadFrom's index: the rest stay, for a relist still to
// be taken in to fall among them, and read what the folder held at the
// end of the snapshot before them (Timeline.from).
func (t *Timeline) FoldTo(n int) {
	if n >= len(t.inputs) {
		t.Fold()
		return
	}
	if n <= 0 {
		return
	}
	snap := t.inputs[n].snap
	if i := slices.IndexFunc(t.starts, func(st snapStart) bool { return st.snap == snap }); i >= 0 {
		t.from = t.starts[i].from
		t.starts = t.starts[i:]
	}
	t.inputs = slices.Clone(t.inputs[n:])
	var open [][]int
	for _, o := range t.open {
		var kept []int
		for _, i := range o {
			if i >= n {
				kept = append(kept, i-n)
			}
		}
		open = append(open, kept)
	}
	t.open = open
}

// Started says a first snapshot was taken in.
func (t *Timeline) Started() bool { return t.started }

// Last is the file of that name as the last snapshot had it, nil if none.
func (t *Timeline) Last(name string) *types.File { return t.files.get(name) }

// LastNames are the names the last snapshot held.
func (t *Timeline) LastNames() []string {
	names := make([]string, len(t.files))
	for i, f := range t.files {
		names[i] = f.Name
	}
	return names
}

// Relisted is when the last relist of the kubelet's taken in was (zero
// for none): the next one comes a relist period after it.
func (t *Timeline) Relisted() time.Time { return t.relist }

// Absorb folds inputs into k as e, their exploration from k by
// ExploreTouched, found podwatch's own view: each part's first end holds
// its keys as the whole kubelet would, so only those keys and the
// inputs' paths change, with no replay of the whole store. A relist
// among the inputs lists every file, and is replayed (Take).
func (k *Kubelet) Absorb(e *Explored, inputs []Input) {
	if slices.ContainsFunc(inputs, func(in Input) bool { return in.Event == nil }) {
		k.Take(inputs)
		return
	}
	keys := map[string]bool{}
	for _, part := range e.Parts {
		for _, key := range part.Keys {
			if key != restKey {
				keys[key] = true
			}
		}
	}
	if k.Storage.strays {
		for uid, p := range k.Storage.pods {
			if keys[p.Key] {
				delete(k.Storage.pods, uid)
			}
		}
	} else {
		for key := range keys {
			if p, ok := k.held(key); ok {
				delete(k.Storage.pods, p.UID)
			}
		}
	}
	for _, part := range e.Parts {
		end := part.Ends[0].Kubelet
		k.Storage.seen = k.Storage.seen || end.Storage.seen
		k.Storage.strays = k.Storage.strays || end.Storage.strays
		for _, key := range part.Keys {
			if key == restKey {
				continue
			}
			if p, ok := end.Source.store[key]; ok {
				k.Source.store[key] = p
			} else {
				delete(k.Source.store, key)
			}
		}
		for uid, p := range end.Storage.pods {
			if keys[p.Key] {
				k.Storage.pods[uid] = p
			}
		}
	}
	for _, in := range inputs {
		path := in.Event.Path
		delete(k.Source.fileKeyMapping, path)
		for _, part := range e.Parts {
			if key, ok := part.Ends[0].Kubelet.Source.fileKeyMapping[path]; ok {
				k.Source.fileKeyMapping[path] = key
			}
		}
	}
}
