package file

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// watchID names the watch in the restart backoff, as in the kubelet.
const watchID = "watch"

// missingRetry is how often a missing path is tried again; as in the kubelet,
// a missing path does not grow the backoff.
const missingRetry = types.MissingPathRetry

// maxDrain bounds how many queued batches are folded into one Snapshot, so a
// never-ending stream of events still yields Snapshots.
const maxDrain = 256

// op is what happened to a watched name, in terms both backends can map to.
type op uint16

const (
	opCreate     op = 1 << iota
	opWrite         // content modified
	opChmod         // metadata changed
	opCloseWrite    // closed after writing; Linux only
	opMovedTo       // renamed into place; Linux only (fsnotify says Create)
	opMovedFrom     // renamed away
	opRemove        // unlinked
	opSelfGone      // the watched object itself was removed, moved or unmounted
	opOverflow      // events were lost
)

// target says which watch reported an event.
type target uint8

const (
	onPath   target = iota // the watched directory, or the single file
	onParent               // the directory holding the path
)

type rawEvent struct {
	on   target
	name string // entry name; "" for the watched object itself
	op   op
}

// watchBatch is what a backend read at once, or why it stopped.
type watchBatch struct {
	events []rawEvent
	err    error // the watch failed; nothing more follows
}

// watcher is one start of the watch of a path and its parent. Close stops it
// and waits for its goroutine.
type watcher interface {
	Events() <-chan watchBatch
	// Single reports that the path was a regular file when watched.
	Single() bool
	Close()
}

var errWatchClosed = errors.New("watch stopped unexpectedly")

// pending folds the events of the batches handled together.
type pending struct {
	// names maps each touched name to how its last event left it.
	names map[string]written
	// dots are touched dot names: never manifests, but one may be a
	// directory or symlink that visible names point through.
	dots   map[string]bool
	relist bool
	// lost: the kernel's queue overflowed, so events went unseen.
	lost    bool
	restart bool
	err     error
	// events are the visible names' events in order, in the kubelet's
	// terms (see types.WatchEvent).
	events []types.WatchEvent
	// versioned: the last of events holds a version already (a write or
	// a move in), so that one more folded into it is a version more.
	versioned bool
}

func (p *pending) addBatch(b watchBatch, single bool, base string) {
	if b.err != nil {
		p.err = b.err
		return
	}
	for _, ev := range b.events {
		p.add(ev, single, base)
	}
}

func (p *pending) add(ev rawEvent, single bool, base string) {
	const replaced = opCreate | opMovedTo | opMovedFrom | opRemove
	if ev.op&opOverflow != 0 {
		p.relist, p.lost = true, true
		return
	}
	name := ev.name
	switch {
	case ev.on == onParent:
		if name != base {
			// The parent itself going away takes the path with it.
			p.restart = p.restart || (name == "" && ev.op&opSelfGone != 0)
			return
		}
		if ev.op&replaced != 0 {
			// The path was replaced, removed or (re)created: a new watch is
			// needed on whatever it names now.
			p.restart = true
		}
		if !single {
			// A chmod of the directory may change what podwatch can read.
			p.relist = p.relist || ev.op&opChmod != 0
			return
		}
	case name == "":
		if ev.op&opSelfGone != 0 {
			p.restart = true
			return
		}
		if !single {
			p.relist = p.relist || ev.op&opChmod != 0
			return
		}
		name = base
	case strings.HasPrefix(name, "."):
		// Not a manifest, but it may be what visible names point through
		// (a "..data" symlink swapped by an atomic writer); handle decides.
		p.dots[name] = true
		return
	}
	if !single {
		p.record(ev, name)
	}
	c := p.names[name]
	if ev.op&(opMovedFrom|opRemove) != 0 {
		c = writtenUnknown
	}
	if ev.op&(opCreate|opWrite) != 0 {
		c = writtenOpen
	}
	if ev.op&(opCloseWrite|opMovedTo) != 0 {
		c = writtenClosed
	}
	p.names[name] = c
}

// record keeps ev as the kubelet's watch takes it: a create, write,
// chmod or move in makes it read the file, a delete or move away drops the
// name's pod; a close after writing alone is nothing to it.
func (p *pending) record(ev rawEvent, name string) {
	var we types.WatchEvent
	switch {
	case ev.op&(opCreate|opMovedTo|opWrite|opChmod) != 0:
		we = types.WatchEvent{Name: name}
	case ev.op&(opRemove|opMovedFrom) != 0:
		we = types.WatchEvent{Name: name, Gone: true}
	default:
		return
	}
	// A write or a move in leaves content the kubelet may read; a create
	// leaves an empty file, a chmod the content it had.
	version := !we.Gone && ev.op&(opWrite|opMovedTo) != 0
	we.Attrib = !we.Gone && ev.op&(opCreate|opMovedTo|opWrite) == 0
	// The kubelet reads the file again on each, but podwatch can only
	// give it what it reads itself: one read is as good as ten. The
	// event counts the versions it stands for, which the kubelet may
	// have read where podwatch did not.
	if n := len(p.events); n > 0 && p.events[n-1].Name == we.Name && p.events[n-1].Gone == we.Gone {
		if version && p.versioned {
			p.events[n-1].Folded++
		}
		p.events[n-1].Attrib = p.events[n-1].Attrib && we.Attrib
		p.versioned = p.versioned || version
		return
	}
	p.events = append(p.events, we)
	p.versioned = version
}

// handle folds b and whatever else is queued and applies it. It reports
// whether that took a full list, whether that list was podwatch's own on an
// event the kubelet ignores (see types.Snapshot.Extra), and whether
// anything was relevant at all: the parent directory reports its other
// names too.
func (s *Source) handle(b watchBatch) (relisted, extra, relevant bool) {
	w := s.w
	single := w.Single()
	p := pending{names: map[string]written{}, dots: map[string]bool{}}
	p.addBatch(b, single, s.base)
drain:
	for i := 0; i < maxDrain && p.err == nil; i++ {
		select {
		case b, ok := <-w.Events():
			if !ok {
				b = watchBatch{err: errWatchClosed}
			}
			p.addBatch(b, single, s.base)
		default:
			break drain
		}
	}

	s.keepEvents(p.events)

	// Names the events named are refreshed first, with what the events said
	// about completeness, whatever else must happen.
	if single == s.single {
		now := s.clk.Now()
		for name, w := range p.names {
			s.refresh(name, s.entryPath(name), now, w)
		}
	} else {
		p.restart = true
	}

	if !p.relist && !single {
		p.relist = s.dotsRedirect(p.dots)
	}

	switch {
	case p.err != nil:
		s.watchFailed(p.err)
		return false, false, true
	case p.restart:
		s.stopWatch()
		s.startWatch()
		s.list()
		return true, false, true
	case p.relist:
		s.list()
		return true, !p.lost, true
	}
	return false, false, len(p.names) > 0
}

// dotsRedirect reports whether a touched dot name is now a directory or a
// symlink, which visible names may point through (the "..data" swap of
// projected volumes). Writers' dot temp files (".x.yaml.tmp" renamed into
// place) are regular files and cost no relist: with a thousand manifests a
// relist per save would make every change slow.
func (s *Source) dotsRedirect(dots map[string]bool) bool {
	for name := range dots {
		fi, err := os.Lstat(s.path + string(os.PathSeparator) + name)
		if err == nil && (fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
			return true
		}
	}
	return false
}

func (s *Source) entryPath(name string) string {
	if s.single {
		return s.path
	}
	if e := s.cache[name]; e != nil {
		return e.file.Path
	}
	return s.path + string(os.PathSeparator) + name
}

// list relists, and restarts the watch when the path turned from a directory
// into a file or back since the watch started.
func (s *Source) list() {
	s.relist()
	if s.w != nil && s.pathErr == nil && s.w.Single() != s.single {
		s.log.Info("manifest path changed between file and directory; restarting watch", "path", s.path)
		s.stopWatch()
		s.startWatch()
		s.relist()
	}
}

// startWatch starts the watch, or arms the retry timer. A missing path is
// retried every second without growing the backoff.
func (s *Source) startWatch() bool {
	w, err := s.newWatcher(s.path)
	if err == nil {
		s.stopRetry()
		s.w, s.retryAt = w, time.Time{}
		if s.watchErr != nil {
			s.log.Info("manifest watch up again", "path", s.path)
		}
		s.watchErr = nil
		return true
	}
	delay := s.missingRetry
	if !errors.Is(err, fs.ErrNotExist) {
		delay = s.backoff.Next(watchID)
	}
	if s.watchErr == nil || s.watchErr.Error() != err.Error() {
		s.log.Warn("cannot watch manifest path", "path", s.path, "err", err, "retry", delay)
	}
	s.watchErr = err
	s.armRetry(delay)
	return false
}

func (s *Source) watchFailed(err error) {
	s.stopWatch()
	delay := s.backoff.Next(watchID)
	s.log.Warn("manifest watch failed", "path", s.path, "err", err, "retry", delay)
	s.watchErr = err
	s.armRetry(delay)
}

func (s *Source) stopWatch() {
	if s.w != nil {
		s.w.Close()
		s.w = nil
	}
}

func (s *Source) armRetry(d time.Duration) {
	s.stopRetry()
	s.retry = s.clk.NewTimer(d)
	s.retryAt = s.clk.Now().Add(d)
}

func (s *Source) stopRetry() {
	if s.retry != nil {
		s.retry.Stop()
		s.retry = nil
	}
}

func (s *Source) watchStatus() types.WatchStatus {
	return types.WatchStatus{
		Up:      s.w != nil,
		Err:     s.watchErr,
		Backoff: s.backoff.Get(watchID),
		RetryAt: s.retryAt,
	}
}

func sameStatus(a, b types.WatchStatus) bool {
	return a.Up == b.Up && a.Backoff == b.Backoff && errString(a.Err) == errString(b.Err)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
