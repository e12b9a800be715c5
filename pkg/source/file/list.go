package file

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"time"
)

// relist lists the path in full, like the kubelet's listConfig. A change it
// finds is not complete: names the watch reported were refreshed, with what
// the watch said, before any relist.
func (s *Source) relist() {
	now := s.clk.Now()
	s.listStart.Store(now.UnixNano())
	s.touchedAll = true
	s.lastList = listStats{}
	defer func() { s.lastList.took = s.clk.Since(now) }()
	id, err := statPath(s.path)
	switch {
	case err != nil:
		s.setPathErr(err)
	case id.mode == fs.ModeDir:
		names, err := s.readDirNames()
		if err != nil {
			s.setPathErr(err)
			return
		}
		s.lastList.listed = len(names)
		s.setSingle(false)
		s.setPathErr(nil)
		// The list replaces the names below: none is placed one by one.
		s.namesDirty = true
		kept := names[:0]
		for _, name := range names {
			// As the kubelet's glob "[^.]*": dot names are never manifests.
			if strings.HasPrefix(name, ".") {
				continue
			}
			if s.refresh(name, s.entryPath(name), now, writtenUnknown) {
				kept = append(kept, name)
			}
		}
		// Every kept name is cached; anything more in the cache was not listed.
		if len(s.cache) > len(kept) {
			for name := range s.cache {
				if _, found := slices.BinarySearch(kept, name); !found {
					s.forget(name)
				}
			}
		}
		s.names, s.namesDirty = kept, false
		s.namesGen++
	case id.mode == 0:
		s.lastList.listed = 1
		s.setSingle(true)
		s.setPathErr(nil)
		s.namesDirty = true
		s.names = s.names[:0]
		if s.refresh(s.base, s.path, now, writtenUnknown) {
			s.names = append(s.names, s.base)
		}
		s.namesDirty = false
	default:
		s.setPathErr(&fs.PathError{Op: "list", Path: s.path,
			Err: fmt.Errorf("neither a directory nor a regular file (%v)", id.mode)})
	}
}

// listStats describes the last relist, for Snapshot.ListDuration and
// Snapshot.Listed.
type listStats struct {
	took   time.Duration
	listed int
}

// setSingle drops the cache when the path changes between a directory and a
// file: the same name would mean another path.
func (s *Source) setSingle(single bool) {
	if s.single != single {
		clear(s.cache)
		s.names, s.namesDirty = nil, false
		s.single = single
	}
}

// setPathErr keeps the Files as they were and logs only transitions.
func (s *Source) setPathErr(err error) {
	switch {
	case err == nil && s.pathErr != nil:
		s.log.Info("manifest path readable again", "path", s.path)
	case err != nil && (s.pathErr == nil || s.pathErr.Error() != err.Error()):
		if errors.Is(err, fs.ErrNotExist) {
			s.log.Info("manifest path does not exist", "path", s.path)
		} else {
			s.log.Warn("cannot list manifest path", "path", s.path, "err", err)
		}
	}
	s.pathErr = err
}

// nameAdded places a name the watch brought into the sorted names, and its
// entry into order when that is in step with them: one change in a large
// folder costs a binary search and a copy, not a sort of every name.
func (s *Source) nameAdded(name string, e *entry) {
	if s.namesDirty {
		return
	}
	i, found := slices.BinarySearch(s.names, name)
	if found {
		return
	}
	inStep := s.orderInStep()
	s.names = slices.Insert(s.names, i, name)
	if inStep {
		s.order = slices.Insert(s.order, i, e)
	} else {
		s.namesGen++
	}
}

// nameRemoved takes a forgotten name out of the sorted names, as nameAdded.
func (s *Source) nameRemoved(name string) {
	if s.namesDirty {
		return
	}
	i, found := slices.BinarySearch(s.names, name)
	if !found {
		return
	}
	inStep := s.orderInStep()
	s.names = slices.Delete(s.names, i, i+1)
	if inStep {
		s.order = slices.Delete(s.order, i, i+1)
	} else {
		s.namesGen++
	}
}

// orderInStep reports whether order holds the entries of names.
func (s *Source) orderInStep() bool {
	return s.orderGen == s.namesGen && len(s.order) == len(s.names)
}

// sortedNames returns the cached names in byte-wise order, rebuilding the
// list only after a list, or a change of the path between folder and file.
func (s *Source) sortedNames() []string {
	if s.namesDirty {
		s.names = s.names[:0]
		for name := range s.cache {
			s.names = append(s.names, name)
		}
		sort.Strings(s.names)
		s.namesDirty = false
		s.namesGen++
	}
	return s.names
}
