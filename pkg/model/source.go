package model

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// FileSource mirrors the kubelet's sourceFile: its store (a
// cache.UndeltaStore keyed by the pod's namespace and name) and its
// fileKeyMapping. The zero value is not usable; see NewFileSource.
type FileSource struct {
	store          map[string]Pod
	fileKeyMapping map[string]string
}

// NewFileSource mirrors newSourceFile: an empty store and mapping.
func NewFileSource() *FileSource {
	return &FileSource{store: map[string]Pod{}, fileKeyMapping: map[string]string{}}
}

// Update mirrors sourceUpdate: what the file source sends to the merge.
// The store sends its whole list on every change; the list is in key order
// here, where the kubelet's is in map order (which matters to nothing a
// store holds: it has one pod per key).
type Update struct {
	Pods []Pod
}

// Read is what extractFromFile makes of one file now: its pod, or the
// error that kept it from one (fs.ErrNotExist when the file is gone).
type Read func(path string) (Pod, error)

// EntryKind is what os.Stat says of a name in the folder.
type EntryKind int

// The kinds extractFromDir tells apart.
const (
	EntryRegular EntryKind = iota
	EntryDir
	EntryOther   // neither a directory nor a regular file
	EntryStatErr // os.Stat failed (a dangling link, a file gone)
)

// Entry is one name in the folder with what os.Stat says of it.
type Entry struct {
	Path string
	Kind EntryKind
}

// ErrPathMissing is listConfig's and doWatch's error for a folder that
// does not exist.
var ErrPathMissing = errors.New("path does not exist, ignoring")

// ListConfig mirrors listConfig for a folder: exists says whether os.Stat
// found it, entries are its names (in any order, dot-files included; the
// port globs and sorts as extractFromDir does). It returns what the source
// sends, nil when it sends nothing, and the error the kubelet logs.
func (s *FileSource) ListConfig(exists bool, entries []Entry, read Read) (*Update, error) {
	if !exists {
		return &Update{Pods: []Pod{}}, ErrPathMissing
	}
	pods, errs := s.extractFromDir(entries, read)
	if len(pods) == 0 {
		// An empty list is sent as it is; the store keeps what it had.
		return &Update{Pods: pods}, errs
	}
	return s.replaceStore(pods...), errs
}

// extractFromDir mirrors extractFromDir: the names that do not start with
// a dot, in byte order, each regular file read by extractFromFile. A file
// that cannot be read or decoded is left out (and logged unless gone).
func (s *FileSource) extractFromDir(entries []Entry, read Read) ([]Pod, error) {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	pods := make([]Pod, 0, len(sorted))
	var errs []error
	for _, e := range sorted {
		if strings.HasPrefix(base(e.Path), ".") {
			continue
		}
		switch e.Kind {
		case EntryRegular:
			pod, err := s.extractFromFile(e.Path, read)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, fmt.Errorf("could not process manifest file %s: %w", e.Path, err))
				}
				continue
			}
			pods = append(pods, pod)
		case EntryDir:
			// "not recursing into manifest path"
		case EntryOther:
			errs = append(errs, fmt.Errorf("manifest path %s is not a directory or file", e.Path))
		case EntryStatErr:
			errs = append(errs, fmt.Errorf("could not get metadata of %s", e.Path))
		}
	}
	return pods, errors.Join(errs...)
}

// extractFromFile mirrors extractFromFile: the pod the file decodes to,
// and on success the file's key recorded in fileKeyMapping.
func (s *FileSource) extractFromFile(path string, read Read) (Pod, error) {
	pod, err := read(path)
	if err != nil {
		return Pod{}, err
	}
	pod.File = path
	s.fileKeyMapping[path] = pod.Key
	return pod, nil
}

// replaceStore mirrors replaceStore: the store becomes the pods, a later
// pod replacing an earlier one of its key, and sends its whole list.
func (s *FileSource) replaceStore(pods ...Pod) *Update {
	clear(s.store)
	for _, p := range pods {
		s.store[p.Key] = p
	}
	return s.list()
}

// list is what the UndeltaStore pushes after each change: all it holds.
func (s *FileSource) list() *Update {
	pods := make([]Pod, 0, len(s.store))
	for _, p := range s.store {
		pods = append(pods, p)
	}
	slices.SortFunc(pods, func(a, b Pod) int { return strings.Compare(a.Key, b.Key) })
	return &Update{Pods: pods}
}

func base(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}
