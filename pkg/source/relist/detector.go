package relist

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/backoff"
	"github.com/podwatch/podwatch/pkg/types"
)

// errUnsupported: the signature needs inotify's IN_OPEN, which the
// portable watch does not offer.
var errUnsupported = errors.New("recognising the kubelet's relist needs Linux inotify")

// errNotDir says --path is not a folder: the kubelet's relist of a single
// file opens no folder, and has no signature apart from podwatch's reads.
var errNotDir = errors.New("not a directory: a relist is recognised in a folder of manifests only")

// missingRetry is how often a missing folder is tried again.
const missingRetry = time.Second

// maxCandidates bounds the folder opens followed at once: the kubelet's
// and podwatch's own relists may overlap, a third is rare.
const maxCandidates = 4

// batch is what the watch read at once, or why it stopped. A batch with
// no events but since set says the queue was found empty then.
type batch struct {
	at time.Time // when it was read
	// since is when the queue was last found empty before the read: every
	// event here arrived after it (zero: not known). Read from a backlog,
	// the events arrived between since and at, no telling when: only
	// since says how far apart two opens were at least.
	since    time.Time
	events   []event // in order
	overflow bool    // events were lost before these
	gone     bool    // the folder's watch ended, or its name changed in the parent
	err      error   // the watch failed; nothing more follows
}

// op is what happened to a name in the folder.
type op uint8

const (
	opened op = iota // the name was opened; "" is the folder itself
	came             // the name was created or moved in
	went             // the name was deleted or moved away
	wrote            // the name's content was written (or truncated)
	read             // the name's content was read
)

// event is one thing seen in the folder. Dot names and folders are left
// out, but for the folder's own opens.
type event struct {
	op   op
	name string
	// regular: for came, the name was a regular file when the event was
	// read (symlinks are not: their target is opened under its own name).
	regular bool
}

// watcher is one start of the watch of the folder. Close stops it and
// waits for its goroutine.
type watcher interface {
	Events() <-chan batch
	// List is the folder's regular non-dot files in byte order, read
	// without opening the folder again. The detector lists once when the
	// watch starts and after lost events, and follows the events between.
	List() ([]string, error)
	// Aged reports whether one of the names was last written (or had its
	// inode changed) before t.
	Aged(names []string, t time.Time) bool
	Close()
}

// candidate is a folder open that may begin a relist: want lists the
// files the folder held then, in byte order, which it must open in that
// order, each within the window of the one before (see prune). A name that went (was
// deleted or moved away, or replaced by what is not a regular file) since
// the folder open may be skipped: the kubelet does not open a file gone
// before its turn (its stat fails). A file created after the folder open
// is not in want: the kubelet may have globbed it, or not. One moved over
// a name in want keeps it: the name never stops naming a file, which the
// kubelet opens.
//
// written orders each write to a file of want against the open matched
// for it, on the queue (see types.RelistWrite). A write after a file's
// match, followed by another open of that file, is written on both sides:
// the open matched may have been a writer's (it opens before it writes,
// as the relist reaches the file, or ahead of another writer's), the
// relist's open then the later one; or it was the relist's, and the later
// open another reader's of the write (podwatch's own reads every write,
// often before a busy kubelet opens its next file). The queue cannot tell
// which.
//
// The relist reads a file just after it opens it, and a writer's open
// that comes between merges with the relist's on the queue when neither
// is read yet (inotify merges a repeated event), so the queue shows one
// open and the write, as for a write after the read. A read of a matched
// file, before a write to it, says the relist read it before the write
// (a read with no content shows as none: an empty file); without one the
// write is on both sides. That holds for every file matched, not only
// the last: writers of several files at once open them as the relist
// goes, and one's open taken for the relist's next file moves the match
// on before the relist has read the file it opened.
type candidate struct {
	at      time.Time
	want    []string
	next    int
	opened  int                 // files of want opened
	step    time.Time           // the last open that matched
	unread  map[string]struct{} // names matched with no read seen since
	gone    map[string]struct{} // names of want that went since the folder open
	written map[string]sides    // names of want written since the folder open
	came    []string            // names not in want that came since the folder open, in byte order
	prior   []types.PriorWrite  // names of want written just before the folder open, in byte order
}

// skippable says want[i] went since the folder open.
func (c *candidate) skippable(i int) bool {
	_, ok := c.gone[c.want[i]]
	return ok
}

// open advances c if name is the next file it must open, or comes after
// files it may skip; it reports whether it did.
func (c *candidate) open(name string, at time.Time) bool {
	if s, ok := c.written[name]; ok && s.after && !s.before {
		// Written since its match, opened again: either open may be the
		// relist's (see written), so it may have read the write.
		s.before, s.since = true, s.afterSince
		c.written[name] = s
		return false
	}
	k := c.next
	for k < len(c.want) && c.want[k] != name && c.skippable(k) {
		k++
	}
	if k == len(c.want) || c.want[k] != name {
		return false
	}
	c.next, c.step = k+1, at
	if c.unread == nil {
		c.unread = map[string]struct{}{}
	}
	c.unread[name] = struct{}{}
	c.opened++
	c.skipTail()
	return true
}

// skipTail passes over skippable names at the end of want: nothing of
// theirs is to come.
func (c *candidate) skipTail() {
	i := len(c.want)
	for i > c.next && c.skippable(i-1) {
		i--
	}
	if i == c.next {
		c.next = len(c.want)
	}
}

// write notes that name was written, or that a regular file came under
// it (created or moved in: arrived), in a batch whose queue was found
// empty at since before it. One that came under a name want lacks came
// after the folder open: the relist may not have read it, and its going
// came after the open however podwatch's clocks place it (came).
func (c *candidate) write(name string, since time.Time, arrived bool) {
	i, found := slices.BinarySearch(c.want, name)
	if !found {
		// Not globbed by this relist (created since), or no file of it.
		if j, known := slices.BinarySearch(c.came, name); arrived && !known {
			c.came = slices.Insert(c.came, j, name)
		}
		return
	}
	if c.written == nil {
		c.written = map[string]sides{}
	}
	s := c.written[name]
	if i >= c.next { // not opened yet; one skipped is not read at all
		s.before, s.since = true, since
	} else {
		s.after, s.afterSince = true, since
		if _, unread := c.unread[name]; unread {
			s.before, s.since = true, since
		}
	}
	c.written[name] = s
}

// read notes that name's content was read.
func (c *candidate) read(name string) {
	delete(c.unread, name)
}

// sides says on which side of a file's open writes to it came, and when
// the queue was found empty before the last write on each side.
type sides struct {
	before, after     bool
	since, afterSince time.Time
}

// writes lists what written holds, in byte order.
func (c *candidate) writes() []types.RelistWrite {
	if len(c.written) == 0 {
		return nil
	}
	out := make([]types.RelistWrite, 0, len(c.written))
	for _, name := range slices.Sorted(maps.Keys(c.written)) {
		s := c.written[name]
		w := types.RelistWrite{Name: name, Before: s.before, After: s.after}
		if s.before {
			w.Since = s.since
		}
		out = append(out, w)
	}
	return out
}

// went notes that name was deleted or moved away.
func (c *candidate) went(name string) {
	if _, found := slices.BinarySearch(c.want, name); !found {
		return
	}
	if c.gone == nil {
		c.gone = map[string]struct{}{}
	}
	c.gone[name] = struct{}{}
	c.skipTail()
}

// done says c opened every file it had to, and enough of them to tell a
// relist from a folder emptied while someone looked at it: at least half
// of what the folder held at its open.
func (c *candidate) done() bool {
	return c.next == len(c.want) && c.opened > 0 && 2*c.opened >= len(c.want)
}

// Detector recognises the kubelet's relist of the manifest folder and
// tracks its phase. Build it with New; Run does the work.
type Detector struct {
	opts    Options
	clk     clock.WithTicker
	log     *slog.Logger
	backoff *backoff.Backoff
	// Seams for tests; New sets the real ones.
	newWatch func(path string, clk clock.PassiveClock, quiet time.Duration) (watcher, error)
	wallNow  func() time.Time // against file times, which are wall-clock

	running atomic.Bool

	// Everything below belongs to the goroutine in Run.
	tracker  *Tracker
	w        watcher
	watchErr error
	cands    []*candidate
	// names are the folder's regular non-dot files in byte order, as the
	// last list and the events since leave them; known says there is such
	// a list. A candidate keeps the slice it was given: shared says one
	// may, so the next change copies it first.
	names  []string
	known  bool
	shared bool
	listed int // files in the folder at the last folder open, -1 before one
	// lastRead is the folder open of the last full read recognised that
	// did not follow a list of podwatch's own (see uneven).
	lastRead time.Time
	// recent holds the names written (or moved in) lately, each with
	// when the queue was found empty before its last write; a folder
	// open hands on those of its list written just before it (prior).
	recent  map[string]time.Time
	retryIn time.Duration // while the watch is down: when to try again (0: never)
}

// New checks opts (zero durations take the defaults) and builds a
// Detector. It starts nothing. A nil clk is the real clock; a nil log
// discards.
func New(opts Options, clk clock.WithTicker, log *slog.Logger) (*Detector, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Path == "" {
		return nil, errors.New("kubelet relist detection: no path")
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if t := strings.TrimRight(opts.Path, string(os.PathSeparator)); t != "" {
		opts.Path = t
	}
	return &Detector{
		opts:     opts,
		clk:      clk,
		log:      log.With("source", "relist"),
		backoff:  backoff.New(clk, backoff.DefaultInitial, backoff.DefaultMax),
		newWatch: newPlatformWatch,
		wallNow:  time.Now,
	}, nil
}

// Options returns the options in effect, defaults applied.
func (d *Detector) Options() Options { return d.opts }

// Run watches the folder until ctx is done and sends an observation for
// every relist recognised and every change of phase. A watch that cannot
// be set up or fails is retried (a missing folder every second, anything
// else with backoff); the phase is Unknown meanwhile. It returns nil once
// ctx is done, with every goroutine it started stopped.
func (d *Detector) Run(ctx context.Context, out chan<- types.RelistObservation) error {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("relist detector: Run is already running")
	}
	defer d.running.Store(false)
	d.tracker = NewTracker(d.opts.Tolerance, d.opts.KubeletPeriod)
	d.cands, d.listed, d.retryIn = nil, -1, 0
	defer d.stopWatch()
	var (
		retry      clock.Timer
		deadline   clock.Timer
		deadlineAt time.Time
	)
	defer func() {
		for _, t := range []clock.Timer{retry, deadline} {
			if t != nil {
				t.Stop()
			}
		}
	}()
	if !d.start(ctx, out) {
		return nil
	}
	for {
		if d.w == nil && retry == nil && d.retryIn > 0 {
			retry = d.clk.NewTimer(d.retryIn)
		}
		if at := d.tracker.Deadline(); !at.Equal(deadlineAt) {
			if deadline != nil {
				deadline.Stop()
				deadline = nil
			}
			deadlineAt = at
			if !at.IsZero() {
				deadline = d.clk.NewTimer(max(at.Sub(d.clk.Now()), 0))
			}
		}
		var events <-chan batch
		if d.w != nil {
			events = d.w.Events()
		}
		var retryC, deadlineC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		if deadline != nil {
			deadlineC = deadline.C()
		}
		ok := true
		select {
		case <-ctx.Done():
			return nil
		case <-retryC:
			retry = nil
			ok = d.start(ctx, out)
		case <-deadlineC:
			deadline, deadlineAt = nil, time.Time{}
			ok = d.emit(ctx, out, d.tracker.Check(d.clk.Now()), nil)
		case b, open := <-events:
			if !open {
				b = batch{err: errors.New("watch stopped unexpectedly")}
			}
			ok = d.handle(ctx, out, b)
			if ok && d.w == nil && d.retryIn == 0 {
				// The folder was replaced: watch what the path names now.
				ok = d.start(ctx, out)
			}
		}
		if !ok {
			return nil
		}
	}
}

// start starts the watch and tells the tracker whether the folder can be
// observed; on failure it sets retryIn (0: never again). It reports false
// when ctx ended while sending.
func (d *Detector) start(ctx context.Context, out chan<- types.RelistObservation) bool {
	d.retryIn = 0
	w, err := d.newWatch(d.opts.Path, d.clk, d.quiet())
	if err != nil {
		d.retryIn = missingRetry
		switch {
		case errors.Is(err, errUnsupported):
			d.retryIn = 0
		case !errors.Is(err, fs.ErrNotExist):
			d.retryIn = d.backoff.Next("watch")
		}
		if d.watchErr == nil || d.watchErr.Error() != err.Error() {
			lvl := slog.LevelWarn
			if errors.Is(err, errNotDir) || errors.Is(err, errUnsupported) {
				lvl = slog.LevelInfo
			}
			d.log.Log(ctx, lvl, "cannot watch for the kubelet's relist: its phase is unknown", "path", d.opts.Path, "err", err, "retry", d.retryIn)
		}
		d.watchErr = err
		return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), false, "the folder is not watched: "+err.Error()), nil)
	}
	if d.watchErr != nil {
		d.log.Info("watching for the kubelet's relist again", "path", d.opts.Path)
	}
	d.w, d.watchErr, d.listed = w, nil, -1
	if !d.list() {
		return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), true, ""), nil)
	}
	d.listed = len(d.names)
	if len(d.names) == 0 {
		return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), false, whyEmpty), nil)
	}
	return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), true, ""), nil)
}

// list takes the folder's names from the watch; it reports whether it
// could.
func (d *Detector) list() bool {
	names, err := d.w.List()
	if err != nil {
		d.log.Debug("cannot list the folder", "path", d.opts.Path, "err", err)
		d.names, d.known, d.shared = nil, false, false
		return false
	}
	d.names, d.known, d.shared = names, true, false
	return true
}

// setName records that name is, or is not, a regular file in the folder.
func (d *Detector) setName(name string, present bool) {
	if !d.known {
		return
	}
	i, found := slices.BinarySearch(d.names, name)
	if found == present {
		return
	}
	if d.shared {
		d.names, d.shared = slices.Clone(d.names), false
	}
	if present {
		d.names = slices.Insert(d.names, i, name)
	} else {
		d.names = slices.Delete(d.names, i, i+1)
	}
}

const whyEmpty = "the folder holds no regular file to recognise a relist by"

func (d *Detector) stopWatch() {
	if d.w != nil {
		d.w.Close()
		d.w = nil
	}
	d.cands = d.cands[:0]
	d.names, d.known, d.shared = nil, false, false
	clear(d.recent)
}

// handle applies one batch; it reports false when ctx ended while sending.
func (d *Detector) handle(ctx context.Context, out chan<- types.RelistObservation, b batch) bool {
	if b.err != nil {
		d.stopWatch()
		d.watchErr = b.err
		d.retryIn = d.backoff.Next("watch")
		d.log.Warn("watch for the kubelet's relist failed", "path", d.opts.Path, "err", b.err, "retry", d.retryIn)
		return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), false, "the folder is not watched: "+b.err.Error()), nil)
	}
	d.prune(b.since)
	if b.overflow {
		d.log.Warn("inotify queue overflowed: the kubelet's relist phase is unknown until seen again", "path", d.opts.Path)
		d.cands = d.cands[:0]
		clear(d.recent)
		// What came and went meanwhile is lost with the rest.
		d.list()
		if !d.emit(ctx, out, d.tracker.Overflow(b.at), nil) {
			return false
		}
	}
	// done is a relist completed in this batch: it is passed on at the
	// batch's end, so that a write the queue holds after its last open
	// is known to be after the relist read the file (see
	// types.RelistWrite.After), though every event of the batch has one
	// time, which may be after podwatch read that write; a relist dated
	// by it would seem to have read the write.
	var done *candidate
	// flush passes done on, if any; false when ctx ended.
	flush := func() bool {
		c := done
		done = nil
		return c == nil || d.relisted(ctx, out, c, b.at)
	}
	for _, e := range b.events {
		var c *candidate
		switch {
		case e.op == opened && e.name == "":
			if !flush() || !d.folderOpened(ctx, out, b.at, b.since) {
				return false
			}
		case e.op == opened:
			// An open after the relist completed is another reader's
			// (podwatch's own, reading a write): it says nothing of
			// what the relist read.
			c = d.fileOpened(e.name, b.at)
		case e.op == read:
			for _, c := range d.cands {
				c.read(e.name)
			}
			if done != nil {
				done.read(e.name)
			}
		case e.op == wrote:
			d.wroteNow(e.name, b.since)
			for _, c := range d.cands {
				c.write(e.name, b.since, false)
			}
			if done != nil {
				done.write(e.name, b.since, false)
			}
		default:
			// A name that no longer names a regular file is not opened
			// under it: the kubelet skips what is not a regular file and
			// reads a symlink's target under the target's name.
			present := e.op == came && e.regular
			if present {
				d.wroteNow(e.name, b.since)
			} else {
				delete(d.recent, e.name)
			}
			if done != nil && present {
				done.write(e.name, b.since, true)
			}
			c = d.nameChanged(e.name, present, !present, b.since)
		}
		if c != nil {
			if !flush() {
				return false
			}
			done = c
		}
	}
	if !flush() {
		return false
	}
	if b.gone {
		// The folder was replaced or went away: watch whatever the path
		// names now.
		d.stopWatch()
	}
	return true
}

// relisted passes on a completed candidate, unless it may be podwatch's
// own read; it reports false when ctx ended while sending.
func (d *Detector) relisted(ctx context.Context, out chan<- types.RelistObservation, c *candidate, seen time.Time) bool {
	if d.mayBeOwn(c) {
		d.log.Debug("full read of files all written within podwatch's own re-read window: not taken for a relist",
			"path", d.opts.Path, "at", c.at, "files", c.opened)
		return true
	}
	sweep, own := d.tracker.Sweep, d.afterOwnList(c.at)
	if own {
		sweep = d.tracker.SweepOwn
	}
	onPhase, changes := sweep(c.at)
	r := &types.KubeletRelist{At: c.at, Seen: seen, Files: c.opened, OnPhase: onPhase,
		RelistRead: types.RelistRead{Written: c.writes(), Listed: c.want, Came: c.came, Prior: c.prior}}
	if !own {
		r.Uneven = d.uneven(c.at)
		d.lastRead = c.at
	}
	d.log.Debug("full read of the folder seen", "path", d.opts.Path, "at", c.at, "files", c.opened,
		"skipped", len(c.want)-c.opened, "onPhase", onPhase, "latency", seen.Sub(c.at))
	return d.emit(ctx, out, changes, r)
}

// folderOpened starts a candidate relist with the files the folder holds
// now, read in a batch at at from a queue found empty at since. A folder
// without a regular file cannot show a relist.
func (d *Detector) folderOpened(ctx context.Context, out chan<- types.RelistObservation, at, since time.Time) bool {
	if !d.known && !d.list() {
		return true
	}
	want := d.names
	d.shared = true
	was := d.listed
	d.listed = len(want)
	if len(want) == 0 {
		if was == 0 {
			return true
		}
		return d.emit(ctx, out, d.tracker.Observable(at, false, whyEmpty), nil)
	}
	if was == 0 {
		if !d.emit(ctx, out, d.tracker.Observable(at, true, ""), nil) {
			return false
		}
	}
	if len(d.cands) == maxCandidates {
		c := d.cands[0]
		d.log.Debug("full read of the folder set aside: too many folder opens followed at once",
			"path", d.opts.Path, "at", c.at, "opened", c.opened, "of", len(c.want), "next", c.want[min(c.next, len(c.want)-1)])
		d.cands = append(d.cands[:0], d.cands[1:]...)
	}
	d.cands = append(d.cands, &candidate{at: at, want: want, step: at, prior: d.prior(want, since)})
	return true
}

// wroteNow notes that name was written, or moved in, in a batch read from
// a queue found empty at since; it forgets the writes noted too long
// before to be handed on (see prior).
func (d *Detector) wroteNow(name string, since time.Time) {
	if d.recent == nil {
		d.recent = map[string]time.Time{}
	}
	maps.DeleteFunc(d.recent, func(_ string, s time.Time) bool { return since.Sub(s) > d.opts.Window })
	d.recent[name] = since
}

// prior is what of want was written just before a folder open read from
// a queue found empty at since: in a batch whose queue was found empty
// within the window before. The dates are the detector's own, whatever
// its lag: a write read in the open's batch or the one just before may be
// read by podwatch's file source only after the open, while one older
// than that was long read. In byte order; nil when none.
func (d *Detector) prior(want []string, since time.Time) []types.PriorWrite {
	var out []types.PriorWrite
	for name, s := range d.recent {
		if since.Sub(s) > d.opts.Window {
			continue
		}
		if _, listed := slices.BinarySearch(want, name); listed {
			out = append(out, types.PriorWrite{Name: name, Since: s})
		}
	}
	slices.SortFunc(out, func(a, b types.PriorWrite) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// quiet is how long after a batch the watch looks again whether its
// queue is empty, when nothing came meanwhile: a little over the window,
// so that an open after a pause that long is known to be too late.
func (d *Detector) quiet() time.Duration { return d.opts.Window + d.opts.Window/4 }

// prune drops the candidates whose last open was more than the window
// before since: every open still to come arrived after since. A gap is
// measured from when the watch found its queue empty, never from when it
// read an event: read late, from a backlog, opens that came in a row seem
// far apart, and that is the detector's lateness, not the reader's.
func (d *Detector) prune(since time.Time) {
	d.cands = slices.DeleteFunc(d.cands, func(c *candidate) bool {
		if since.Sub(c.step) <= d.opts.Window {
			return false
		}
		// Why a relist goes unrecognised: the file it stopped at.
		d.log.Debug("full read of the folder broken off: no open for longer than the window after the one before",
			"path", d.opts.Path, "at", c.at, "opened", c.opened, "of", len(c.want), "gap", since.Sub(c.step), "next", c.want[min(c.next, len(c.want)-1)])
		return true
	})
}

// fileOpened advances the candidates name is the next file of, read at
// at. It returns the latest that completed, if one did (see complete).
func (d *Detector) fileOpened(name string, at time.Time) *candidate {
	advanced := false
	for _, c := range d.cands {
		advanced = c.open(name, at) || advanced
	}
	if !advanced {
		return nil
	}
	return d.complete()
}

// nameChanged follows a name that came (and is a regular file: present)
// or went. The candidates are told of one that is gone: the kubelet may
// not open it. A candidate left with nothing to open is complete.
func (d *Detector) nameChanged(name string, present, gone bool, since time.Time) *candidate {
	d.setName(name, present)
	if !gone {
		// New content under the name (a file moved over it, or created
		// after it went).
		for _, c := range d.cands {
			c.write(name, since, true)
		}
		return nil
	}
	for _, c := range d.cands {
		c.went(name)
	}
	return d.complete()
}

// complete returns the latest candidate that is done: the open nearest
// the kubelet's own, when another reader opened the folder just before
// it. Every other candidate goes with it, as they share its opens.
func (d *Detector) complete() *candidate {
	for i := len(d.cands) - 1; i >= 0; i-- {
		if c := d.cands[i]; c.done() {
			d.cands = d.cands[:0]
			return c
		}
	}
	return nil
}

// mayBeOwn says every file c read was written so recently that a list of
// podwatch's own file source re-reads it, as a relist would, and, when
// the source says when it lists, that one began just before c's open.
func (d *Detector) mayBeOwn(c *candidate) bool {
	if d.opts.OwnListPeriod <= 0 {
		return false
	}
	if d.opts.OwnLists != nil && !d.afterOwnList(c.at) {
		return false
	}
	return !d.w.Aged(c.want, d.wallNow().Add(-OwnRereadWindow-d.opts.OwnListPeriod))
}

// afterOwnList says a list of podwatch's own file source began just
// before at (within OwnListLag): a full read opened then may be that
// list, whatever the files' ages (its first list reads every file).
func (d *Detector) afterOwnList(at time.Time) bool {
	own := d.opts.OwnLists
	if own == nil {
		return false
	}
	s := own.ListStarted()
	return !s.IsZero() && !at.Before(s) && at.Sub(s) <= OwnListLag
}

// uneven says a full read opened at at came sooner than the kubelet's
// period less the tolerance after the one before, while no phase is known
// (see types.KubeletRelist.Uneven), however soon: a held-up file source
// takes its ticker's held tick at once after its late relist. On a known phase, or one followed while held
// up, the tracker says when relists come late.
func (d *Detector) uneven(at time.Time) bool {
	p, tol := d.opts.KubeletPeriod, d.opts.Tolerance
	ph := d.tracker.Phase()
	if p <= 0 || d.lastRead.IsZero() || ph.State == types.RelistKnown || !ph.HeldUp.IsZero() {
		return false
	}
	gap := at.Sub(d.lastRead)
	return gap > 0 && gap < p-tol
}

// emit sends the phases passed through, then the relist with the phase
// after it; the last phase rides with the relist when there is one.
func (d *Detector) emit(ctx context.Context, out chan<- types.RelistObservation, changes []types.RelistPhase, r *types.KubeletRelist) bool {
	for i, p := range changes {
		if r != nil && i == len(changes)-1 {
			break
		}
		d.logPhase(p)
		if !send(ctx, out, types.RelistObservation{Phase: p}) {
			return false
		}
	}
	if r == nil {
		return true
	}
	if len(changes) > 0 {
		d.logPhase(changes[len(changes)-1])
	}
	return send(ctx, out, types.RelistObservation{Relist: r, Phase: d.tracker.Phase()})
}

func (d *Detector) logPhase(p types.RelistPhase) {
	d.log.Debug("kubelet relist phase", "state", p.State.String(), "period", p.Period, "next", p.Next, "why", p.Why)
}

func send(ctx context.Context, out chan<- types.RelistObservation, o types.RelistObservation) bool {
	select {
	case out <- o:
		return true
	case <-ctx.Done():
		return false
	}
}
