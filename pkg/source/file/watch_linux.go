package file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Raw inotify rather than fsnotify: fsnotify cannot subscribe to
// IN_CLOSE_WRITE (its WithOps is unexported in v1.10) and reports IN_MOVED_TO
// as a plain Create, and those two are how a file is known to be complete.
const (
	dirMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
		unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK
	fileMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	// The parent only matters for the path's own name; in single-file mode
	// it also sees writes to the file under that name.
	parentMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
		unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	parentSingleMask = parentMask | unix.IN_MODIFY | unix.IN_CLOSE_WRITE
)

type inotifyWatcher struct {
	f        *os.File // non-blocking, so Close wakes a pending Read
	single   bool
	wdPath   int32
	wdParent int32
	ch       chan watchBatch
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newPlatformWatcher(path string) (watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("unable to create inotify: %w", limitHint(os.NewSyscallError("inotify_init1", err)))
	}
	w := &inotifyWatcher{
		f:        os.NewFile(uintptr(fd), "inotify"),
		wdPath:   -1,
		wdParent: -1,
		ch:       make(chan watchBatch),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if err := w.add(fd, path); err != nil {
		w.f.Close()
		return nil, limitHint(err)
	}
	go w.read()
	return w, nil
}

// add watches the parent before it looks at path, so a swap of path after
// the stat is reported by the parent.
func (w *inotifyWatcher) add(fd int, path string) error {
	parent := filepath.Dir(path)
	var st unix.Stat_t
	if parent != path {
		if err := unix.Stat(parent, &st); err != nil {
			return &fs.PathError{Op: "stat", Path: parent, Err: err}
		}
	}
	if err := unix.Stat(path, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	mask := uint32(dirMask)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFREG:
		w.single, mask = true, fileMask
	default:
		return &fs.PathError{Op: "watch", Path: path, Err: errors.New("neither a directory nor a regular file")}
	}
	if parent != path {
		pmask := uint32(parentMask)
		if w.single {
			pmask = parentSingleMask
		}
		wd, err := unix.InotifyAddWatch(fd, parent, pmask)
		if err != nil {
			return &fs.PathError{Op: "inotify_add_watch", Path: parent, Err: err}
		}
		w.wdParent = int32(wd)
	}
	wd, err := unix.InotifyAddWatch(fd, path, mask)
	if err != nil {
		return &fs.PathError{Op: "inotify_add_watch", Path: path, Err: err}
	}
	if int32(wd) == w.wdParent {
		// One inotify watch per inode: the path's mask replaced the parent's.
		return &fs.PathError{Op: "watch", Path: path, Err: errors.New("path resolves to its own parent directory")}
	}
	w.wdPath = int32(wd)
	return nil
}

// limitHint names the sysctl behind an inotify limit error: the kernel's
// "no space left on device" sends operators to the wrong place.
func limitHint(err error) error {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("%w (this user's inotify watches are used up: fs.inotify.max_user_watches)", err)
	case errors.Is(err, unix.EMFILE):
		return fmt.Errorf("%w (this user's inotify instances are used up: fs.inotify.max_user_instances)", err)
	}
	return err
}

func (w *inotifyWatcher) Events() <-chan watchBatch { return w.ch }
func (w *inotifyWatcher) Single() bool              { return w.single }

func (w *inotifyWatcher) Close() {
	w.once.Do(func() {
		close(w.stop)
		w.f.Close()
		<-w.done
	})
}

func (w *inotifyWatcher) read() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			select {
			case <-w.stop:
			default:
				w.send(watchBatch{err: fmt.Errorf("reading inotify events: %w", err)})
			}
			return
		}
		evs := w.parse(buf[:n])
		if len(evs) > 0 && !w.send(watchBatch{events: evs}) {
			return
		}
	}
}

func (w *inotifyWatcher) parse(buf []byte) []rawEvent {
	evs := make([]rawEvent, 0, len(buf)/unix.SizeofInotifyEvent)
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		nameLen := int(binary.NativeEndian.Uint32(buf[12:]))
		end := min(unix.SizeofInotifyEvent+nameLen, len(buf))
		name := string(bytes.TrimRight(buf[unix.SizeofInotifyEvent:end], "\x00"))
		buf = buf[end:]
		if ev, ok := w.convert(wd, mask, name); ok {
			evs = append(evs, ev)
		}
	}
	return evs
}

func (w *inotifyWatcher) convert(wd int32, mask uint32, name string) (rawEvent, bool) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		return rawEvent{op: opOverflow}, true
	}
	var ev rawEvent
	switch wd {
	case w.wdPath:
		ev.on = onPath
	case w.wdParent:
		ev.on = onParent
	default:
		return ev, false
	}
	ev.name = name
	for _, m := range [...]struct {
		bit uint32
		op  op
	}{
		{unix.IN_CREATE, opCreate},
		{unix.IN_MODIFY, opWrite},
		{unix.IN_ATTRIB, opChmod},
		{unix.IN_CLOSE_WRITE, opCloseWrite},
		{unix.IN_MOVED_TO, opMovedTo},
		{unix.IN_MOVED_FROM, opMovedFrom},
		{unix.IN_DELETE, opRemove},
		{unix.IN_DELETE_SELF, opSelfGone},
		{unix.IN_MOVE_SELF, opSelfGone},
		{unix.IN_IGNORED, opSelfGone},
		{unix.IN_UNMOUNT, opSelfGone},
	} {
		if mask&m.bit != 0 {
			ev.op |= m.op
		}
	}
	return ev, ev.op != 0
}

func (w *inotifyWatcher) send(b watchBatch) bool {
	select {
	case w.ch <- b:
		return true
	case <-w.stop:
		return false
	}
}
