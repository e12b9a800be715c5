package relist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/utils/clock"
)

const (
	// The folder: opens of it and in it, reads and writes in it (to order
	// each write against a relist's open and read of the file), names
	// coming and going (so that the detector knows what the folder held
	// at each open of it, and which names changed since), and its own end.
	dirMask = unix.IN_OPEN | unix.IN_ACCESS | unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK
	// The parent: only the folder's own name coming and going matters, so
	// that a folder replaced (or a symlinked --path swapped) is watched
	// again.
	parentMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
)

// inotifyWatch is an inotify instance of its own (podwatch's file source
// has another, which never asks for opens) and the folder, held open so
// that listing it again shows as no open.
type inotifyWatch struct {
	f        *os.File // the inotify instance, non-blocking, so Close wakes a Read
	dir      *os.File
	dirFd    int // dir's descriptor, for the reading goroutine's lstat
	wdDir    int32
	wdParent int32
	base     string
	clk      clock.PassiveClock
	raw      syscall.RawConn // f's descriptor, for FIONREAD
	quiet    time.Duration   // see Detector.quiet
	ch       chan batch
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newPlatformWatch(path string, clk clock.PassiveClock, quiet time.Duration) (_ watcher, err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, limitHint(os.NewSyscallError("inotify_init1", err))
	}
	w := &inotifyWatch{
		f: os.NewFile(uintptr(fd), "inotify"), wdDir: -1, wdParent: -1, base: filepath.Base(path), clk: clk,
		quiet: quiet, ch: make(chan batch), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if w.raw, err = w.f.SyscallConn(); err != nil {
		w.f.Close()
		return nil, err
	}
	defer func() {
		if err != nil {
			w.f.Close()
			if w.dir != nil {
				w.dir.Close()
			}
		}
	}()
	// The parent first, so that the folder swapped after it is opened is
	// seen; the folder opened before its watch, so that this open is not
	// taken for someone else's.
	if parent := filepath.Dir(path); parent != path {
		wd, err := unix.InotifyAddWatch(fd, parent, parentMask)
		if err != nil {
			return nil, limitHint(&fs.PathError{Op: "inotify_add_watch", Path: parent, Err: err})
		}
		w.wdParent = int32(wd)
	}
	dfd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: errNotDir}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	w.dir, w.dirFd = os.NewFile(uintptr(dfd), path), dfd
	wd, err := unix.InotifyAddWatch(fd, path, dirMask)
	if err != nil {
		return nil, limitHint(&fs.PathError{Op: "inotify_add_watch", Path: path, Err: err})
	}
	if int32(wd) == w.wdParent {
		return nil, &fs.PathError{Op: "watch", Path: path, Err: errors.New("path resolves to its own parent directory")}
	}
	w.wdDir = int32(wd)
	// The watch is on what path names now; the folder held must be it.
	var held, named unix.Stat_t
	if err := unix.Fstat(dfd, &held); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := unix.Stat(path, &named); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if held.Dev != named.Dev || held.Ino != named.Ino {
		return nil, &fs.PathError{Op: "watch", Path: path, Err: errors.New("replaced while being watched")}
	}
	go w.read()
	return w, nil
}

// limitHint names the sysctl behind an inotify limit error.
func limitHint(err error) error {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("%w (this user's inotify watches are used up: fs.inotify.max_user_watches)", err)
	case errors.Is(err, unix.EMFILE):
		return fmt.Errorf("%w (this user's inotify instances are used up: fs.inotify.max_user_instances)", err)
	}
	return err
}

func (w *inotifyWatch) Events() <-chan batch { return w.ch }

// List reads the folder held open again: its regular files, dot names
// left out, in byte order. Symlinks are left out too: what they point to
// is opened under the target's name, in the target's folder.
func (w *inotifyWatch) List() ([]string, error) {
	if _, err := w.dir.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	ents, err := w.dir.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

func (w *inotifyWatch) Aged(names []string, t time.Time) bool {
	var st unix.Stat_t
	for _, name := range names {
		if unix.Fstatat(w.dirFd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if time.Unix(st.Mtim.Unix()).Before(t) && time.Unix(st.Ctim.Unix()).Before(t) {
			return true
		}
	}
	return false
}

func (w *inotifyWatch) Close() {
	w.once.Do(func() {
		close(w.stop)
		w.f.Close()
		<-w.done
		w.dir.Close()
	})
}

// read reads the queue until Close, and says with every batch when the
// queue was last found empty before it (batch.since): it looks before
// each read, and once more when nothing came for quiet after a batch,
// which it then reports alone. So an open read late, from a backlog, is
// not taken for one that came late, and a pause is known for one.
func (w *inotifyWatch) read() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	var empty time.Time
	for {
		if at, ok := w.empty(); ok {
			empty = at
		}
		n, err := w.f.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Nothing came for quiet since the last batch: say so if the
			// queue is still empty, then wait as long as it takes.
			err = w.f.SetReadDeadline(time.Time{})
			if at, ok := w.empty(); ok && err == nil {
				empty = at
				if !w.send(batch{at: at, since: at}) {
					return
				}
			}
			if err == nil {
				continue
			}
		}
		if err != nil {
			select {
			case <-w.stop:
			default:
				w.send(batch{err: fmt.Errorf("reading inotify events: %w", err)})
			}
			return
		}
		b := w.parse(buf[:n])
		b.at, b.since = w.clk.Now(), empty
		if (len(b.events) > 0 || b.overflow || b.gone) && !w.send(b) {
			return
		}
		// A read deadline is the runtime's own timer, on the real clock:
		// only how long it waits matters, not the time it is set to.
		if err := w.f.SetReadDeadline(time.Now().Add(w.quiet)); err != nil {
			w.send(batch{err: fmt.Errorf("reading inotify events: %w", err)})
			return
		}
	}
}

// empty reports whether the queue holds nothing, and a time no later
// than when it was found so: every event read after arrived later.
// (TIOCINQ is FIONREAD, which inotify answers with the bytes queued.)
func (w *inotifyWatch) empty() (time.Time, bool) {
	at := w.clk.Now()
	var n int
	var ierr error
	if err := w.raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ierr != nil {
		return time.Time{}, false
	}
	return at, n == 0
}

// parse keeps, in order, the opens of the folder (name "") and of its
// non-dot entries that are not folders, reads of and writes to those, and
// those names coming and going (a name that came is looked up at once:
// whether it is a regular file now), and whether events were lost or the
// folder's watch ended.
func (w *inotifyWatch) parse(buf []byte) batch {
	var b batch
	// A file's read follows its open: the name of the event before is
	// taken again rather than copied.
	var prev string
	nameOf := func(raw []byte) string {
		if n := bytes.TrimRight(raw, "\x00"); string(n) != prev {
			prev = string(n)
		}
		return prev
	}
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		nameLen := int(binary.NativeEndian.Uint32(buf[12:]))
		end := min(unix.SizeofInotifyEvent+nameLen, len(buf))
		name := buf[unix.SizeofInotifyEvent:end]
		buf = buf[end:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			b.overflow = true
		case wd == w.wdParent:
			n := string(bytes.TrimRight(name, "\x00"))
			b.gone = b.gone || n == w.base || (n == "" && mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0)
		case wd != w.wdDir:
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
			b.gone = true
		case mask&unix.IN_OPEN != 0 && nameLen == 0:
			b.events = append(b.events, event{op: opened})
		case mask&unix.IN_ISDIR != 0 || nameLen == 0 || name[0] == '.':
		case mask&unix.IN_OPEN != 0:
			b.events = append(b.events, event{op: opened, name: nameOf(name)})
		case mask&unix.IN_MODIFY != 0:
			b.events = append(b.events, event{op: wrote, name: nameOf(name)})
		case mask&unix.IN_ACCESS != 0:
			b.events = append(b.events, event{op: read, name: nameOf(name)})
		case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
			n := string(bytes.TrimRight(name, "\x00"))
			var st unix.Stat_t
			regular := unix.Fstatat(w.dirFd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
			b.events = append(b.events, event{op: came, name: n, regular: regular})
		case mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
			b.events = append(b.events, event{op: went, name: string(bytes.TrimRight(name, "\x00"))})
		}
	}
	return b
}

func (w *inotifyWatch) send(b batch) bool {
	select {
	case w.ch <- b:
		return true
	case <-w.stop:
		return false
	}
}
