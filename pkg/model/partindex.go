package model

// partIndex is what restrict needs of the whole kubelet and the inputs,
// built once for every part of an exploration, so that restricting to
// one part costs what the part holds, not the folder: many parts (a
// first list, whose every read may have been partial, makes one a file)
// would otherwise cost the folder each.
type partIndex struct {
	// paths holds, per key, the paths that may give it (keysOf).
	paths map[string][]string
	// listings holds, per input, its relist's summary; nil for an event.
	listings []*listingIndex
}

// listingIndex sums up one relist's listing for restrict.
type listingIndex struct {
	at map[string]int // index in the listing by path
	// other holds the indexes of the names that are not regular files,
	// which every part keeps.
	other []int
	// pods counts the regular files whose reads may give a pod, and
	// always the regular files whose reads may not give none.
	pods, always int
}

func newPartIndex(inputs []Input, keysOf map[string]map[string]bool) *partIndex {
	ix := &partIndex{paths: map[string][]string{}, listings: make([]*listingIndex, len(inputs))}
	for path, keys := range keysOf {
		for key := range keys {
			ix.paths[key] = append(ix.paths[key], path)
		}
	}
	for i, in := range inputs {
		if in.Relist == nil {
			continue
		}
		li := &listingIndex{at: make(map[string]int, len(in.Relist.Files))}
		for j, f := range in.Relist.Files {
			li.at[f.Path] = j
			if f.Kind != EntryRegular {
				li.other = append(li.other, j)
				continue
			}
			pod, none := gives(f)
			if pod {
				li.pods++
			}
			if !none {
				li.always++
			}
		}
		ix.listings[i] = li
	}
	return ix
}

// gives says whether the reads of a listed file may give a pod, and may
// give none.
func gives(f Listed) (pod, none bool) {
	none = len(f.Reads) == 0
	for _, o := range f.Reads {
		pod = pod || o.Pod != nil
		none = none || o.Pod == nil
	}
	return pod, none
}
