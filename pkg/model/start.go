package model

// NarrowFirstList narrows the reads of the window's first input, the
// list podwatch started with, to podwatch's own view for each path keep
// allows, and says whether any changed. Another way there is a read of a
// file still being written when the kubelet listed it; for a file that
// has been quiet since, the kubelet's watch read it again after its last
// write and holds what podwatch read. The listing is copied, so a clone
// of t keeps its own.
func (t *Timeline) NarrowFirstList(keep func(path string) bool) bool {
	if len(t.inputs) == 0 || t.inputs[0].Relist == nil {
		return false
	}
	l := t.inputs[0].Relist
	var files []Listed
	for i, f := range l.Files {
		if len(f.Reads) < 2 || !keep(f.Path) {
			continue
		}
		if files == nil {
			files = append([]Listed(nil), l.Files...)
		}
		files[i].Reads = f.Reads[:1:1]
	}
	if files == nil {
		return false
	}
	narrowed := *l
	narrowed.Files = files
	t.inputs[0].Relist = &narrowed
	return true
}
