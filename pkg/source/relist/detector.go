package relist

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
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

// batch is what the watch read at once, or why it stopped.
type batch struct {
	at       time.Time // when it was read
	opens    []string  // in order; "" is the folder itself
	overflow bool      // events were lost before these
	gone     bool      // the folder's watch ended, or its name changed in the parent
	err      error     // the watch failed; nothing more follows
}

// watcher is one start of the watch of the folder. Close stops it and
// waits for its goroutine.
type watcher interface {
	Events() <-chan batch
	// List is the folder's regular non-dot files in byte order, read
	// without opening the folder again.
	List() ([]string, error)
	// Aged reports whether one of the names was last written (or had its
	// inode changed) before t.
	Aged(names []string, t time.Time) bool
	Close()
}

// candidate is a folder open that may begin a relist: want lists the
// files it must open, in order, each within the window of the one
// before.
type candidate struct {
	at   time.Time
	want []string
	next int
	step time.Time // the last open that matched
}

// Detector recognises the kubelet's relist of the manifest folder and
// tracks its phase. Build it with New; Run does the work.
type Detector struct {
	opts    Options
	clk     clock.WithTicker
	log     *slog.Logger
	backoff *backoff.Backoff
	// Seams for tests; New sets the real ones.
	newWatch func(path string, clk clock.PassiveClock) (watcher, error)
	wallNow  func() time.Time // against file times, which are wall-clock

	running atomic.Bool

	// Everything below belongs to the goroutine in Run.
	tracker  *Tracker
	w        watcher
	watchErr error
	cands    []candidate
	listed   int           // files in the folder at the last look, -1 before one
	retryIn  time.Duration // while the watch is down: when to try again (0: never)
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
	d.tracker = NewTracker(d.opts.Tolerance)
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
	w, err := d.newWatch(d.opts.Path, d.clk)
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
	names, err := w.List()
	if err != nil {
		return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), true, ""), nil)
	}
	d.listed = len(names)
	if len(names) == 0 {
		return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), false, whyEmpty), nil)
	}
	return d.emit(ctx, out, d.tracker.Observable(d.clk.Now(), true, ""), nil)
}

const whyEmpty = "the folder holds no regular file to recognise a relist by"

func (d *Detector) stopWatch() {
	if d.w != nil {
		d.w.Close()
		d.w = nil
	}
	d.cands = d.cands[:0]
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
	if b.overflow {
		d.log.Warn("inotify queue overflowed: the kubelet's relist phase is unknown until seen again", "path", d.opts.Path)
		d.cands = d.cands[:0]
		if !d.emit(ctx, out, d.tracker.Overflow(b.at), nil) {
			return false
		}
	}
	for _, name := range b.opens {
		if name == "" {
			if !d.folderOpened(ctx, out, b.at) {
				return false
			}
			continue
		}
		if c, ok := d.fileOpened(name, b.at); ok {
			if d.mayBeOwn(c) {
				d.log.Debug("full read of files all written within podwatch's own re-read window: not taken for a relist",
					"at", c.at, "files", len(c.want))
				continue
			}
			onPhase, changes := d.tracker.Sweep(c.at)
			r := &types.KubeletRelist{At: c.at, Seen: b.at, Files: len(c.want), OnPhase: onPhase}
			d.log.Debug("full read of the folder seen", "at", c.at, "files", len(c.want), "onPhase", onPhase,
				"latency", b.at.Sub(c.at))
			if !d.emit(ctx, out, changes, r) {
				return false
			}
		}
	}
	if b.gone {
		// The folder was replaced or went away: watch whatever the path
		// names now.
		d.stopWatch()
	}
	return true
}

// folderOpened starts a candidate relist with the files the folder holds
// now. A folder without a regular file cannot show a relist.
func (d *Detector) folderOpened(ctx context.Context, out chan<- types.RelistObservation, at time.Time) bool {
	want, err := d.w.List()
	if err != nil {
		d.log.Debug("cannot list the folder after an open", "path", d.opts.Path, "err", err)
		return true
	}
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
		d.cands = append(d.cands[:0], d.cands[1:]...)
	}
	d.cands = append(d.cands, candidate{at: at, want: want, step: at})
	return true
}

// fileOpened advances the candidates name is the next file of and drops
// those whose window passed. When one completes it returns the latest
// completed: the open nearest the kubelet's own, when another reader
// opened the folder just before it; every other candidate goes with it,
// as they share its opens.
func (d *Detector) fileOpened(name string, at time.Time) (candidate, bool) {
	kept := d.cands[:0]
	var done candidate
	found := false
	for _, c := range d.cands {
		if at.Sub(c.step) > d.opts.Window {
			continue
		}
		if c.want[c.next] == name {
			c.next++
			c.step = at
			if c.next == len(c.want) {
				done, found = c, true // later candidates come later
				continue
			}
		}
		kept = append(kept, c)
	}
	d.cands = kept
	if found {
		d.cands = d.cands[:0]
	}
	return done, found
}

// mayBeOwn says every file c read was written so recently that a list of
// podwatch's own file source re-reads it, as a relist would.
func (d *Detector) mayBeOwn(c candidate) bool {
	if d.opts.OwnListPeriod <= 0 {
		return false
	}
	return !d.w.Aged(c.want, d.wallNow().Add(-OwnRereadWindow-d.opts.OwnListPeriod))
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
