package model

import (
	"slices"
	"strings"

	"github.com/podwatch/podwatch/pkg/types"
)

// files are a snapshot's files, sorted by name as types.Snapshot.Files
// is, shared with the snapshot and never changed: a timeline keeps them
// without a copy, and finds a name by binary search, so that a step does
// not cost a map of every file.
type files []*types.File

// get is the file of that name, nil if none.
func (fs files) get(name string) *types.File {
	i, ok := slices.BinarySearchFunc(fs, name, func(f *types.File, n string) int { return strings.Compare(f.Name, n) })
	if !ok {
		return nil
	}
	return fs[i]
}

// with is fs with every file of now in place of its name's, and the names
// now lacks kept as fs has them; a new slice, sorted by name.
func (fs files) with(now files) files {
	out := make(files, 0, max(len(fs), len(now)))
	i, j := 0, 0
	for i < len(fs) || j < len(now) {
		switch {
		case j == len(now) || (i < len(fs) && fs[i].Name < now[j].Name):
			out = append(out, fs[i])
			i++
		case i == len(fs) || now[j].Name < fs[i].Name:
			out = append(out, now[j])
			j++
		default:
			out = append(out, now[j])
			i, j = i+1, j+1
		}
	}
	return out
}

// only is fs with the names keep says, in a new slice.
func (fs files) only(keep func(name string) bool) files {
	var out files
	for _, f := range fs {
		if keep(f.Name) {
			out = append(out, f)
		}
	}
	return out
}
