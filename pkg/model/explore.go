package model

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// explorePart feeds inputs to the port from k along every choice, keeping
// distinct states only and at most max of them after any input. The first
// end is podwatch's own view.
func explorePart(k *Kubelet, inputs []Input, max int) ([]End, bool) {
	var ends []End
	seen := map[string]bool{}
	orders, capped := orderings(inputs, max)
	for _, order := range orders {
		paths := []*path{start(k)}
		for _, in := range order {
			capped = capped || in.Capped
			var next []*path
			step := map[string]bool{}
			for _, p := range paths {
				qs := p.apply(in)
				if len(paths) == 1 && len(qs) == 1 {
					// One way in, one way on: nothing to tell apart, and a
					// fingerprint costs the part's whole state.
					next = qs
					break
				}
				for _, q := range qs {
					fp := q.fingerprint()
					if step[fp] {
						continue
					}
					step[fp] = true
					next = append(next, q)
				}
			}
			if len(next) > max {
				next, capped = next[:max], true
			}
			paths = next
		}
		if len(orders) == 1 && len(paths) == 1 {
			ends = append(ends, End{Kubelet: paths[0].k, Runs: paths[0].runs})
			continue
		}
		for _, p := range paths {
			if fp := p.fingerprint(); !seen[fp] {
				seen[fp] = true
				ends = append(ends, End{Kubelet: p.k, Runs: p.runs})
			}
		}
	}
	return ends, capped
}

// orderings are the orders in which the kubelet may have taken the inputs
// in, the given one first: each relist also before up to Early of the
// inputs before it. At most max of them; past that it says so.
func orderings(inputs []Input, max int) ([][]Input, bool) {
	orders := [][]Input{slices.Clone(inputs)}
	for i, in := range inputs {
		if in.Relist == nil || in.Early == 0 {
			continue
		}
		var more [][]Input
		for _, o := range orders {
			at := slices.IndexFunc(o, func(x Input) bool { return x.Relist == in.Relist })
			for j := 1; j <= in.Early && at-j >= 0 && i-j >= 0; j++ {
				moved := slices.Clone(o)
				moved = slices.Delete(moved, at, at+1)
				moved = slices.Insert(moved, at-j, in)
				more = append(more, moved)
			}
		}
		orders = append(orders, more...)
		if len(orders) > max {
			return orders[:max], true
		}
	}
	return orders, false
}

// maxCombinations bounds the combinations of its reads' outcomes one
// relist is taken along: each of many files with a choice multiplies
// them, and past any cap's worth the exploration is capped anyway.
const maxCombinations = 1024

// path is one way so far.
type path struct {
	k    *Kubelet
	runs map[string][]string
}

func start(k *Kubelet) *path {
	p := &path{k: k.clone(), runs: map[string][]string{}}
	for _, pod := range k.Storage.pods {
		if pod.Key != restKey && pod.Key != otherKey {
			p.runs[pod.Key] = []string{pod.identity()}
		}
	}
	return p
}

func (p *path) clone() *path {
	runs := make(map[string][]string, len(p.runs))
	for key, r := range p.runs {
		runs[key] = slices.Clone(r)
	}
	return &path{k: p.k.clone(), runs: runs}
}

// apply is p after in, one path per choice.
func (p *path) apply(in Input) []*path {
	if in.Event == nil && in.push != noPush {
		return p.pushed(in)
	}
	if in.Relist != nil {
		return p.relist(in, maxCombinations)
	}
	if in.Event.Type == PodDelete {
		if _, mapped := p.k.Source.fileKeyMapping[in.Event.Path]; !mapped && in.push != noPush {
			// The name's last read may have given another part's key,
			// whose drop sends the store.
			return p.pushed(in)
		}
		return []*path{p.eventInPlace(in, Outcome{})}
	}
	if len(in.Reads) == 1 {
		// One way on: p goes on as it, with no copy.
		return []*path{p.eventInPlace(in, in.Reads[0])}
	}
	var out []*path
	for _, o := range in.Reads {
		out = append(out, p.clone().eventInPlace(in, o))
	}
	return out
}

// pushed is p after the store may have been sent as it is, by another
// part's change, one path per way in.push allows, podwatch's own first.
func (p *path) pushed(in Input) []*path {
	q := p.clone()
	q.merge(q.k.Source.list(), in.At)
	switch in.push {
	case surePush:
		return []*path{q}
	case mayPushNot:
		return []*path{p, q}
	}
	return []*path{q, p}
}

// first is p after in as podwatch's own view has it: every first
// choice, with none of the others built.
func (p *path) first(in Input) *path {
	if in.push == noPush && in.Relist != nil {
		return p.relist(in, 1)[0]
	}
	return p.apply(in)[0]
}

// eventInPlace is p after the watch event in, read as o, p itself
// changed: for the one way on, which nothing else holds p for.
func (p *path) eventInPlace(in Input, o Outcome) *path {
	if o.Pod != nil && o.Pod.Key == otherKey {
		// Another part's key: the file source maps the path to it, and
		// sends the store, which this part holds as it was.
		delete(p.k.Source.fileKeyMapping, in.Event.Path)
		p.merge(p.k.Source.list(), in.At)
		return p
	}
	u, _ := p.k.Source.ConsumeWatchEvent(*in.Event, func(string) (Pod, error) { return o.get() })
	p.merge(u, in.At)
	return p
}

// relist is p after the relist in, one path per combination of the
// reads' outcomes, the first ones, at most n of them.
func (p *path) relist(in Input, n int) []*path {
	l := in.Relist
	pick := make([]int, len(l.Files))
	entries, read := reader(l, pick)
	var out []*path
	for {
		q := p.clone()
		u, _ := q.k.Source.ListConfig(!l.Missing, entries, read)
		q.merge(u, in.At)
		out = append(out, q)
		if len(out) == n {
			// More than any cap keeps: the caller caps the rest.
			return out
		}
		// The next combination, the first file's choice turning fastest.
		i := 0
		for ; i < len(pick); i++ {
			if pick[i]+1 < len(l.Files[i].Reads) {
				pick[i]++
				break
			}
			pick[i] = 0
		}
		if i == len(pick) {
			return out
		}
	}
}

// merge hands u to the merge at the time of the input that sent it, and
// notes, per key, what runs after it.
func (p *path) merge(u *Update, at time.Time) {
	if u == nil {
		return
	}
	p.k.Storage.MergeAt(u, at)
	now := map[string]string{}
	for _, pod := range p.k.Storage.pods {
		if pod.Key != restKey && pod.Key != otherKey {
			now[pod.Key] = pod.identity()
		}
	}
	for key := range now {
		if _, ok := p.runs[key]; !ok {
			p.runs[key] = []string{""}
		}
	}
	for key, r := range p.runs {
		if r[len(r)-1] != now[key] {
			p.runs[key] = append(r, now[key])
		}
	}
}

func (p *path) fingerprint() string {
	var b strings.Builder
	p.k.fingerprint(&b)
	b.WriteByte(4)
	for _, key := range slices.Sorted(maps.Keys(p.runs)) {
		b.WriteString(key + "\x00" + strings.Join(p.runs[key], "\x02") + "\x01")
	}
	return b.String()
}

// reader is l's entries for ListConfig, and its read of each file: the
// pick-th of the file's outcomes, as pick holds at the read.
func reader(l *Listing, pick []int) ([]Entry, Read) {
	entries := make([]Entry, len(l.Files))
	at := make(map[string]int, len(l.Files))
	for i, f := range l.Files {
		entries[i] = f.Entry
		if _, ok := at[f.Path]; !ok {
			at[f.Path] = i
		}
	}
	return entries, func(path string) (Pod, error) {
		i, ok := at[path]
		if !ok || len(l.Files[i].Reads) == 0 {
			return Pod{}, errUnlisted
		}
		return l.Files[i].Reads[pick[i]].get()
	}
}

func (o Outcome) get() (Pod, error) {
	if o.Pod != nil {
		return *o.Pod, nil
	}
	if o.Err == nil {
		return Pod{}, errUnlisted
	}
	return Pod{}, o.Err
}
