package model

import (
	"maps"
	"slices"
	"strings"
)

// Explored is every distinct way the inputs may have gone, part by part.
type Explored struct {
	Parts []Part
	// Capped says some part was capped.
	Capped bool
	// from is the kubelet explored from as ExploreTouched narrowed it,
	// nil from Explore, for ReplayEach of the same inputs.
	from *Kubelet
}

// Part is the exploration of the pod keys the inputs link: the keys one
// file's reads may give. Parts are explored apart, so that choices in one
// do not multiply those in another; the keys no read has a choice for
// are one part, which nothing multiplies. Only a relist links them further: it
// sends an empty list when no file gives a pod, which drops every pod and
// keeps the store. A part sees the rest of the folder in a relist as one
// stand-in file, which gives a pod or not as the rest's reads may.
type Part struct {
	Keys []string
	// Ends are the distinct ways the part's inputs may have gone,
	// podwatch's own view (every read as it read it, every relist where
	// it saw it) first.
	Ends []End
	// Capped says some ways were left out: after an input there were more
	// distinct states than the cap.
	Capped bool
}

// End is one way a part's inputs may have gone: the kubelet's state after
// them and, per pod key, the pods it ran in turn (Kubelet.Running, "" for
// none), from the one it ran before the inputs.
type End struct {
	Kubelet *Kubelet
	Runs    map[string][]string
}

// The rest of the folder, for a part, in a relist.
const (
	restPath = "\x00rest"
	restKey  = "\x00rest"
)

var restPod = Pod{Key: restKey, UID: restKey, Semantic: restKey, File: restPath}

// otherKey marks, for a part, a read that gave another part's key, which
// only a guess at content podwatch never read does (Unseen). On a watch
// event the file source then maps the path to that key and sends the
// store, which the part holds as it was (path.eventInPlace); no state
// keeps the pod, so a later delete of the path, which drops it, is a
// store the part may be sent (restrict). A relist that reads it keeps it
// in the store as a pod of that one stand-in key.
const otherKey = "\x00other"

var otherPod = Pod{Key: otherKey, UID: otherKey, Semantic: otherKey}

// mineOnly is reads as a part of the keys in sees them: a pod of another
// part's key is the otherKey mark. reads itself when it has none.
func mineOnly(reads []Outcome, in func(key string) bool) []Outcome {
	if !slices.ContainsFunc(reads, func(o Outcome) bool { return o.Pod != nil && !in(o.Pod.Key) }) {
		return reads
	}
	out := make([]Outcome, 0, len(reads))
	for _, o := range reads {
		if o.Pod != nil && !in(o.Pod.Key) {
			p := otherPod
			o = Outcome{Pod: &p}
		}
		if !slices.ContainsFunc(out, o.same) {
			out = append(out, o)
		}
	}
	return out
}

// Explore feeds inputs to the port from k (which it leaves as it is)
// along every choice podwatch cannot see: each outcome of each read, each
// place a relist may have fallen among the events queued before it. Each
// part keeps distinct states only, so that ways which meet go on as one,
// and at most max of them after any input; past that it is Capped.
func Explore(k *Kubelet, inputs []Input, max int) *Explored {
	if e, ok := exploreOneWay(k, inputs); ok {
		return e
	}
	// keysOf maps a path to the keys it may give, each to whether a read
	// links it to the path's other keys: not when only a guess at content
	// podwatch never read gives it (Unseen). A part sees such a read of
	// another part's key as the otherKey mark (mineOnly).
	keysOf := map[string]map[string]bool{}
	note := func(path, key string, guess bool) {
		if keysOf[path] == nil {
			keysOf[path] = map[string]bool{}
		}
		keysOf[path][key] = keysOf[path][key] || !guess
	}
	for path, key := range k.Source.fileKeyMapping {
		note(path, key, false)
	}
	unsurePaths := map[string]bool{} // paths a read has a choice for
	noteReads := func(path string, reads []Outcome) {
		if len(reads) > 1 {
			unsurePaths[path] = true
		}
		for _, o := range reads {
			if o.Pod != nil {
				note(path, o.Pod.Key, strings.HasPrefix(o.Pod.UID, Unseen))
			}
		}
	}
	for _, in := range inputs {
		if in.Event != nil {
			noteReads(in.Event.Path, in.Reads)
			continue
		}
		for _, f := range in.Relist.Files {
			noteReads(f.Path, f.Reads)
		}
	}
	ix := newPartIndex(inputs, keysOf)
	still := stillKeys(k, inputs, keysOf, ix)
	// Union the keys of each path; every key held at start is a part's,
	// but for the still ones, which the rest stands for.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if _, ok := parent[x]; !ok {
			parent[x] = x
		}
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	for key := range k.Source.store {
		if !still[key] {
			find(key)
		}
	}
	for _, p := range k.Storage.pods {
		if !still[p.Key] {
			find(p.Key)
		}
	}
	for _, keys := range keysOf {
		var first string
		for key, links := range keys {
			if !links || still[key] {
				continue // a guess, or the one key of its one path
			}
			if first == "" {
				first = find(key)
				continue
			}
			parent[find(key)] = first
		}
	}
	// Keys no read has a choice for are explored as one part: without
	// choices, exploring them together multiplies nothing, and a part
	// per key would cost each a copy of the rest.
	unsure := map[string]bool{}
	for path, keys := range keysOf {
		if unsurePaths[path] {
			for key := range keys {
				unsure[find(key)] = true
			}
		}
	}
	sure := ""
	for key := range parent {
		if r := find(key); !unsure[r] {
			if sure == "" {
				sure = r
			} else if r != sure {
				parent[r] = sure
			}
		}
	}
	byRoot := map[string][]string{}
	for key := range parent {
		byRoot[find(key)] = append(byRoot[find(key)], key)
	}
	out := &Explored{}
	for _, keys := range byRoot {
		slices.Sort(keys)
		part := Part{Keys: keys}
		in := func(key string) bool { _, ok := slices.BinarySearch(keys, key); return ok }
		pk, pin := restrict(k, inputs, keys, in, keysOf, ix)
		part.Ends, part.Capped = explorePart(pk, pin, max)
		out.Parts = append(out.Parts, part)
		out.Capped = out.Capped || part.Capped
	}
	slices.SortFunc(out.Parts, func(a, b Part) int { return strings.Compare(a.Keys[0], b.Keys[0]) })
	return out
}

// exploreOneWay is Explore of inputs that leave no choice: watch events
// each read one way, with no relist. Then every key is one part, which
// nothing multiplies, and its one way is podwatch's own: the part is k
// itself, with no restriction to build.
func exploreOneWay(k *Kubelet, inputs []Input) (*Explored, bool) {
	for _, in := range inputs {
		if in.Event == nil || (in.Event.Type != PodDelete && len(in.Reads) != 1) {
			return nil, false
		}
	}
	keys := map[string]bool{}
	for key := range k.Source.store {
		keys[key] = true
	}
	for _, p := range k.Storage.pods {
		keys[p.Key] = true
	}
	for _, key := range k.Source.fileKeyMapping {
		keys[key] = true
	}
	for _, in := range inputs {
		if in.Event.Type != PodDelete && in.Reads[0].Pod != nil {
			keys[in.Reads[0].Pod.Key] = true
		}
	}
	if len(keys) == 0 {
		return &Explored{}, true
	}
	p := start(k)
	for _, in := range inputs {
		p = p.first(in)
	}
	part := Part{Keys: slices.Sorted(maps.Keys(keys)), Ends: []End{{Kubelet: p.k, Runs: p.runs}}}
	return &Explored{Parts: []Part{part}}, true
}

// restrict is k and inputs as the part of the keys in (keys, sorted)
// sees them: its files' events, its keys' state, and the rest of the
// folder as one stand-in pod. It looks only at what the part holds,
// through ix, and at the keys each path may give (keysOf).
func restrict(k *Kubelet, inputs []Input, keys []string, in func(key string) bool, keysOf map[string]map[string]bool, ix *partIndex) (*Kubelet, []Input) {
	// mine: the path may give one of the part's keys; foreign: another
	// part's, or the rest's.
	holds := func(path string, ours bool) bool {
		for key := range keysOf[path] {
			if in(key) == ours {
				return true
			}
		}
		return false
	}
	mine := func(path string) bool { return holds(path, true) }
	foreign := func(path string) bool { return holds(path, false) }
	keyed := func(path string) bool { return len(keysOf[path]) > 0 }
	pk := k.only(keys, in)
	for _, key := range keys {
		for _, path := range ix.paths[key] {
			if m, ok := k.Source.fileKeyMapping[path]; ok && in(m) {
				pk.Source.fileKeyMapping[path] = m
			}
		}
	}

	var pin []Input
	kept := make([]bool, len(inputs))
	last := -1 // the last relist, before which no input moves
	for i := range inputs {
		if inputs[i].Relist != nil {
			last = i
		}
	}
	sent := noPush // how the last input kept sent the whole store
	for i, x := range inputs {
		if x.Event != nil {
			push := pushOf(x, keyed)
			switch {
			case mine(x.Event.Path):
				x.Reads = mineOnly(x.Reads, in)
				if x.Event.Type == PodDelete && foreign(x.Event.Path) {
					x.push = mayPushNot
				}
				pin = append(pin, x)
				sent = noPush
			case push != noPush && i > last && sentAgain(sent, push):
				// The store sent again as it was just sent changes
				// nothing, and no relist can come between the two.
				continue
			case push != noPush:
				pin = append(pin, Input{push: push, At: x.At})
				sent = push
			default:
				continue
			}
			kept[i] = true
			continue
		}
		kept[i] = true
		sent = noPush
		li := ix.listings[i]
		// The part's own files and the names that are no regular file, in
		// the listing's order; the rest of the folder sums up as one.
		idx := slices.Clone(li.other)
		pods, always := li.pods, li.always
		taken := map[int]bool{}
		for _, key := range keys {
			for _, path := range ix.paths[key] {
				j, ok := li.at[path]
				if !ok || x.Relist.Files[j].Kind != EntryRegular || taken[j] {
					continue
				}
				taken[j] = true
				idx = append(idx, j)
				pod, none := gives(x.Relist.Files[j])
				if pod {
					pods--
				}
				if !none {
					always--
				}
			}
		}
		slices.Sort(idx)
		l := &Listing{Missing: x.Relist.Missing, Files: make([]Listed, 0, len(idx)+1)}
		for _, j := range idx {
			f := x.Relist.Files[j]
			f.Reads = mineOnly(f.Reads, in)
			l.Files = append(l.Files, f)
		}
		mayPod, mayNone := pods > 0, always == 0
		var reads []Outcome
		if mayPod {
			p := restPod
			reads = append(reads, Outcome{Pod: &p})
		}
		if mayNone {
			reads = append(reads, Outcome{Err: errUnlisted})
		}
		if mayPod {
			l.Files = append(l.Files, Listed{Entry: Entry{Path: restPath, Kind: EntryRegular}, Reads: reads})
		}
		early := 0
		for j := i - 1; j >= i-x.Early && j >= 0; j-- {
			if kept[j] {
				early++
			}
		}
		pin = append(pin, Input{Relist: l, Early: early, At: x.At})
	}
	return pk, pin
}

// sentAgain says a push after the push sent, with nothing between, leaves
// the ways as they were, podwatch's own first: the store it may send is
// the one just sent.
func sentAgain(sent, push push) bool {
	switch sent {
	case surePush:
		return true
	case mayPush:
		return push != surePush
	case mayPushNot:
		return push == mayPushNot
	}
	return false
}

// Part is the part that holds key, nil when no input touches it.
func (e *Explored) Part(key string) *Part {
	for i := range e.Parts {
		if _, ok := slices.BinarySearch(e.Parts[i].Keys, key); ok {
			return &e.Parts[i]
		}
	}
	return nil
}

// pushOf says whether another part's event x sends the whole store: an
// add or modify does when it reads a pod (the store sends on every Add,
// changed or not), a delete may when its file may give a key.
func pushOf(x Input, keyed func(path string) bool) push {
	if x.Event.Type == PodDelete {
		if keyed(x.Event.Path) {
			return mayPush
		}
		return noPush
	}
	n := 0
	for _, o := range x.Reads {
		if o.Pod != nil {
			n++
		}
	}
	switch {
	case n == 0:
		return noPush
	case n == len(x.Reads):
		return surePush
	case x.Reads[0].Pod != nil:
		return mayPush
	}
	return mayPushNot
}
