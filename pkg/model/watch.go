package model

import (
	"fmt"
	"strings"
)

// FsOp is an fsnotify.Op: the kinds of inotify event one event may carry.
type FsOp uint32

// The fsnotify ops produceWatchEvent looks at.
const (
	Create FsOp = 1 << iota
	Write
	Remove
	Rename
	Chmod
)

// EventType mirrors podEventType.
type EventType int

// The types of watchEvent.
const (
	PodAdd EventType = iota
	PodModify
	PodDelete
)

// WatchEvent mirrors watchEvent: a file and what happened to it.
type WatchEvent struct {
	Path string
	Type EventType
}

// ProduceWatchEvent mirrors produceWatchEvent: the watch event the kubelet
// queues for an fsnotify event, and whether it queues one. A dot-file is
// ignored; a create is an add; a write or a chmod is a modify; a remove or
// a rename (away) is a delete, in that order of precedence.
func ProduceWatchEvent(path string, op FsOp) (WatchEvent, bool) {
	if strings.HasPrefix(base(path), ".") {
		return WatchEvent{}, false
	}
	var t EventType
	switch {
	case op&Create != 0:
		t = PodAdd
	case op&Write != 0, op&Chmod != 0:
		t = PodModify
	case op&Remove != 0, op&Rename != 0:
		t = PodDelete
	default:
		return WatchEvent{}, false
	}
	return WatchEvent{Path: path, Type: t}, true
}

// ConsumeWatchEvent mirrors consumeWatchEvent: an add or modify reads the
// file and adds its pod to the store under its key, replacing whatever
// file gave that key; a file that does not decode changes nothing. A
// delete drops the pod of the key the file last gave, whichever file that
// pod came from now. It returns what the store sends, nil when nothing
// changed, and the error the kubelet logs.
func (s *FileSource) ConsumeWatchEvent(e WatchEvent, read Read) (*Update, error) {
	switch e.Type {
	case PodAdd, PodModify:
		pod, err := s.extractFromFile(e.Path, read)
		if err != nil {
			return nil, fmt.Errorf("can't process config file %q: %w", e.Path, err)
		}
		s.store[pod.Key] = pod
		return s.list(), nil
	case PodDelete:
		key, ok := s.fileKeyMapping[e.Path]
		if !ok {
			return nil, nil
		}
		if _, ok := s.store[key]; !ok {
			return nil, fmt.Errorf("the pod with key %s doesn't exist in cache", key)
		}
		delete(s.store, key)
		delete(s.fileKeyMapping, e.Path)
		return s.list(), nil
	}
	return nil, nil
}

// DoWatchMissing mirrors doWatch for a folder os.Stat does not find: it
// sends an empty list, and the kubelet tries again a second later.
func (s *FileSource) DoWatchMissing() (*Update, error) {
	return &Update{Pods: []Pod{}}, ErrPathMissing
}
