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
