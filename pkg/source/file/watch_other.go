//go:build !linux

package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fsnotifyWatcher is the portable watch: it cannot tell a file moved into
// place from one created empty, nor see a close after writing, so files only
// become complete by settling.
type fsnotifyWatcher struct {
	fw     *fsnotify.Watcher
	path   string
	parent string
	single bool
	ch     chan watchBatch
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func newPlatformWatcher(path string) (watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("unable to create watcher: %w", err)
	}
	w := &fsnotifyWatcher{fw: fw, path: path, parent: filepath.Dir(path),
		ch: make(chan watchBatch), stop: make(chan struct{}), done: make(chan struct{})}
	if err := w.add(); err != nil {
		fw.Close()
		return nil, err
	}
	go w.forward()
	return w, nil
}

func (w *fsnotifyWatcher) add() error {
	if w.parent != w.path {
		if err := w.fw.Add(w.parent); err != nil {
			return err
		}
	}
	fi, err := os.Stat(w.path)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
	case fi.Mode().IsRegular():
		w.single = true
	default:
		return &os.PathError{Op: "watch", Path: w.path, Err: errors.New("neither a directory nor a regular file")}
	}
	return w.fw.Add(w.path)
}

func (w *fsnotifyWatcher) Events() <-chan watchBatch { return w.ch }
func (w *fsnotifyWatcher) Single() bool              { return w.single }

func (w *fsnotifyWatcher) Close() {
	w.once.Do(func() {
		close(w.stop)
		w.fw.Close()
		<-w.done
	})
}

func (w *fsnotifyWatcher) forward() {
	defer close(w.done)
	for {
		var b watchBatch
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			r, ok := w.convert(ev)
			if !ok {
				continue
			}
			b.events = []rawEvent{r}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				b.events = []rawEvent{{op: opOverflow}}
			} else {
				b.err = err
			}
		}
		select {
		case w.ch <- b:
		case <-w.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

func (w *fsnotifyWatcher) convert(ev fsnotify.Event) (rawEvent, bool) {
	var o op
	if ev.Has(fsnotify.Create) {
		o |= opCreate
	}
	if ev.Has(fsnotify.Write) {
		o |= opWrite
	}
	if ev.Has(fsnotify.Chmod) {
		o |= opChmod
	}
	if ev.Has(fsnotify.Remove) {
		o |= opRemove
	}
	if ev.Has(fsnotify.Rename) {
		o |= opMovedFrom
	}
	dir, base := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	switch {
	case ev.Name == w.path || dir == w.parent:
		// The path itself, whichever watch saw it: seen as from the parent.
		return rawEvent{on: onParent, name: base, op: o}, o != 0
	case !w.single && dir == w.path:
		return rawEvent{on: onPath, name: base, op: o}, o != 0
	}
	return rawEvent{}, false
}
