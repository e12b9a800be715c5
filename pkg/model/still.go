package model

// stillKeys are the keys that no way of the inputs moves, which Explore
// leaves to the rest of the folder: a relist that lists a key's one file
// as the store holds it replaces the store's pod with the same pod, and
// the merge finds nothing to do, so only the keys whose listing differs
// cost a relist's exploration.
//
// A key is still when the file source holds its pod and the merge runs
// it; exactly one path may give it (keysOf), a path that gives no other
// key and that fileKeyMapping maps to it; no watch event names that
// path; and every relist lists the path as a regular file whose one read
// gives that pod. Such a relist is never empty, so it links no keys. A
// relist of a missing folder, and a merge with stray pods, leave no key
// still.
func stillKeys(k *Kubelet, inputs []Input, keysOf map[string]map[string]bool, ix *partIndex) map[string]bool {
	if k.Storage.strays {
		return nil
	}
	relisted := false
	named := map[string]bool{} // paths a watch event names
	for _, in := range inputs {
		switch {
		case in.Event != nil:
			named[in.Event.Path] = true
		case in.Relist.Missing:
			return nil
		default:
			relisted = true
		}
	}
	if !relisted {
		return nil // without a relist, touchedBy has narrowed the keys already
	}
	still := map[string]bool{}
	for key, p := range k.Source.store {
		paths := ix.paths[key]
		if len(paths) != 1 || len(keysOf[paths[0]]) != 1 || named[paths[0]] || k.Source.fileKeyMapping[paths[0]] != key {
			continue
		}
		if run, ok := k.held(key); !ok || !samePod(run, p) {
			continue
		}
		if listedAsHeld(inputs, ix, paths[0], p) {
			still[key] = true
		}
	}
	return still
}

// listedAsHeld says every relist among inputs lists path as a regular
// file whose one read gives p.
func listedAsHeld(inputs []Input, ix *partIndex, path string, p Pod) bool {
	for i, in := range inputs {
		if in.Relist == nil {
			continue
		}
		j, ok := ix.listings[i].at[path]
		if !ok {
			return false
		}
		f := in.Relist.Files[j]
		if f.Kind != EntryRegular || len(f.Reads) != 1 || f.Reads[0].Pod == nil || !samePod(*f.Reads[0].Pod, p) {
			return false
		}
	}
	return true
}

// samePod says a and b are one pod from one file: the identity the merge
// compares, and the path.
func samePod(a, b Pod) bool {
	return a.UID == b.UID && a.Semantic == b.Semantic && a.File == b.File
}
