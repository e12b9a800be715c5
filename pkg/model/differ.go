package model

import (
	"slices"
	"strings"
)

// Differing names the keys whose ways hold them differently at the end
// of the inputs, for a caller that folds the window by force, keeping
// podwatch's own view: for each, the pods the other ways run for it
// (Running), which the fold drops. A key of a capped part maps to nil:
// the ways left out are unknown, so any of them may differ. Keys whose
// ways agree are not named.
func (e *Explored) Differing() map[string][]string {
	out := map[string][]string{}
	for _, part := range e.Parts {
		switch {
		case part.Capped:
			for _, key := range part.Keys {
				if key != restKey {
					out[key] = nil
				}
			}
			continue
		case len(part.Ends) == 1:
			continue // one way: nothing dropped
		}
		prints := make([]map[string]string, len(part.Ends))
		for i, end := range part.Ends {
			prints[i] = end.Kubelet.keyPrints(part.Keys)
		}
		for _, key := range part.Keys {
			if key == restKey {
				continue
			}
			var runs []string
			for i, end := range part.Ends[1:] {
				if prints[i+1][key] == prints[0][key] {
					continue
				}
				if r := end.Kubelet.Running(key); !slices.Contains(runs, r) {
					runs = append(runs, r)
				}
			}
			if runs != nil {
				out[key] = runs
			}
		}
	}
	return out
}

// keyPrints is, for each of keys, what k holds of it alone: the store's
// pod, the pod the merge runs, and the paths fileKeyMapping gives the
// key for, whose delete events would drop it. One pass over the mapping
// serves every key.
func (k *Kubelet) keyPrints(keys []string) map[string]string {
	paths := map[string][]string{}
	for path, key := range k.Source.fileKeyMapping {
		if _, ok := slices.BinarySearch(keys, key); ok {
			paths[key] = append(paths[key], path)
		}
	}
	out := make(map[string]string, len(keys))
	for _, key := range keys {
		var b strings.Builder
		if p, ok := k.Source.store[key]; ok {
			b.WriteString(p.UID + "\x00" + p.Semantic + "\x00" + p.File)
		}
		b.WriteString("\x01" + k.Running(key) + "\x01")
		slices.Sort(paths[key])
		b.WriteString(strings.Join(paths[key], "\x00"))
		out[key] = b.String()
	}
	return out
}

// ReplacesStore says a relist among inputs replaces the file source's
// store whatever way the inputs went: it lists a file that gives a pod
// on every read it may have had, so its list is not empty, and
// replaceStore drops whatever the store held before (an empty list, or
// a folder missing, keeps it). The merge then runs what the list gives,
// whatever it ran before the relist.
func ReplacesStore(inputs []Input) bool {
	for _, in := range inputs {
		if in.Relist == nil || in.Relist.Missing {
			continue
		}
		for _, f := range in.Relist.Files {
			if f.Kind != EntryRegular || strings.HasPrefix(base(f.Path), ".") {
				continue
			}
			if pod, none := gives(f); pod && !none {
				return true
			}
		}
	}
	return false
}
