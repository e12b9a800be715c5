package file

import (
	"context"
	"errors"
	"hash/maphash"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/backoff"
	"github.com/podwatch/podwatch/pkg/manifest"
)

// Source lists and watches one path. Build it with New; Run does the work.
type Source struct {
	opts    Options
	path    string // trailing separators trimmed
	base    string // name of the single file
	clk     clock.WithTicker
	log     *slog.Logger
	seed    maphash.Seed
	backoff *backoff.Backoff

	// Seams for tests; New sets the real ones.
	newWatcher   func(path string) (watcher, error)
	openFile     func(name string, flag int, perm fs.FileMode) (*os.File, error)
	decode       func(data []byte, opts manifest.Options) (*types.Pod, error)
	wallNow      func() time.Time // against file times, which are wall-clock
	missingRetry time.Duration

	running atomic.Bool
	// listStart is when the last list began (UnixNano of the clock, 0
	// before one), for ListStarted, read from other goroutines.
	listStart atomic.Int64

	// Everything below belongs to the goroutine in Run.
	cache      map[string]*entry
	names      []string // sorted cache keys, unless namesDirty (set while a list runs)
	namesDirty bool
	// order holds the entries of names, in order, so a snapshot after one
	// change copies files without a map lookup per name. Rebuilt when
	// names is.
	order    []*entry
	orderGen uint64
	namesGen uint64 // incremented whenever names is rebuilt
	single   bool
	pathErr  error
	w        watcher // nil while the watch is down
	watchErr error
	retry    clock.Timer // armed while the watch is down
	retryAt  time.Time
	lastList listStats
	// seq is the Seq of the last snapshot built.
	seq uint64
	// touched holds the names whose entry was replaced or forgotten since
	// the last snapshot, for Snapshot.Changed; touchedAll says a relist
	// looked at every name since.
	touched    map[string]struct{}
	touchedAll bool
	// events are the watch events since the last snapshot, for
	// Snapshot.Events; eventsLost says there were more than maxEvents.
	events     []types.WatchEvent
	eventsLost bool
}

// maxEvents bounds Snapshot.Events: past it, a consumer has Changed only.
const maxEvents = 4096

// New checks opts (zero values take the defaults) and builds a Source. It
// starts nothing. A nil clk is the real clock; a nil log discards.
func New(opts Options, clk clock.WithTicker, log *slog.Logger) (*Source, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.Path = cleanPath(opts.Path)
	return &Source{
		opts:         opts,
		path:         opts.Path,
		base:         filepath.Base(opts.Path),
		clk:          clk,
		log:          log.With("source", "file"),
		seed:         maphash.MakeSeed(),
		backoff:      backoff.New(clk, backoff.DefaultInitial, backoff.DefaultMax),
		newWatcher:   newPlatformWatcher,
		openFile:     os.OpenFile,
		decode:       manifest.Decode,
		wallNow:      time.Now,
		missingRetry: missingRetry,
		cache:        map[string]*entry{},
		touched:      map[string]struct{}{},
	}, nil
}

// Options returns the options in effect, defaults applied.
func (s *Source) Options() Options { return s.opts }

// ListStarted is when the source last began a full list of the path, on
// its clock; zero before the first. A list opens the folder once, then
// reads the files that changed: the relist detector must know its own
// process's reads from the kubelet's. Safe for concurrent use.
func (s *Source) ListStarted() time.Time {
	n := s.listStart.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Run watches and lists until ctx is done, sending a Snapshot after the first
// list, after every later list, and after each group of watch events. It
// returns nil once ctx is done, with every goroutine it started stopped. Run
// must not be called again while it runs; a later Run keeps the cache.
func (s *Source) Run(ctx context.Context, out chan<- types.Snapshot) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("file source: Run is already running")
	}
	defer s.running.Store(false)
	defer s.stopRetry()
	defer s.stopWatch()
	ticker := s.clk.NewTicker(s.opts.FileCheckFrequency)
	defer ticker.Stop()
	s.log.Info("watching manifest path", "path", s.path,
		"fileCheckFrequency", s.opts.FileCheckFrequency)

	// Watch first, then list, so that nothing changed in between goes unseen.
	s.startWatch()
	s.list()
	if !s.send(ctx, out, true, false) {
		return nil
	}
	for {
		var events <-chan watchBatch
		if s.w != nil {
			events = s.w.Events()
		}
		var retry <-chan time.Time
		if s.retry != nil {
			retry = s.retry.C()
		}
		var relisted, extra bool
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			s.list()
			relisted = true
		case <-retry:
			s.retry = nil
			was := s.watchStatus()
			if !s.startWatch() {
				if sameStatus(was, s.watchStatus()) {
					continue // a missing path, tried again each second
				}
				break
			}
			s.list()
			relisted = true
		case b, ok := <-events:
			if !ok {
				b = watchBatch{err: errWatchClosed}
			}
			var relevant bool
			if relisted, extra, relevant = s.handle(b); !relevant {
				continue
			}
		}
		if !s.send(ctx, out, relisted, extra) {
			return nil
		}
	}
}

func (s *Source) send(ctx context.Context, out chan<- types.Snapshot, relist, extra bool) bool {
	snap := s.snapshot(relist, extra)
	select {
	case out <- snap:
		return true
	case <-ctx.Done():
		return false
	}
}

// snapshot copies the current state into a new Snapshot; nothing in it is
// touched afterwards.
func (s *Source) snapshot(relist, extra bool) types.Snapshot {
	names := s.sortedNames()
	if !s.orderInStep() {
		s.order = s.order[:0]
		for _, name := range names {
			s.order = append(s.order, s.cache[name])
		}
		s.orderGen = s.namesGen
	}
	files := make([]*types.File, len(s.order))
	for i, e := range s.order {
		files[i] = e.file
	}
	s.seq++
	snap := types.Snapshot{
		Time:    s.clk.Now(),
		Seq:     s.seq,
		Changed: s.changedSince(relist),
		Events:  s.eventsSince(relist && !extra),
		Relist:  relist,
		Extra:   relist && extra,
		Single:  s.single,
		Path:    s.path,
		PathErr: s.pathErr,
		Files:   files,
		Watch:   s.watchStatus(),
	}
	if relist {
		snap.ListDuration, snap.Listed = s.lastList.took, s.lastList.listed
	}
	return snap
}

// changedSince is Snapshot.Changed for the snapshot being built, and starts
// counting afresh for the next one.
func (s *Source) changedSince(relist bool) []string {
	var changed []string
	if !relist && !s.touchedAll {
		changed = make([]string, 0, len(s.touched))
		for name := range s.touched {
			changed = append(changed, name)
		}
		slices.Sort(changed)
	}
	clear(s.touched)
	s.touchedAll = false
	return changed
}

// keepEvents adds the events of one handled group for the next snapshot.
func (s *Source) keepEvents(evs []types.WatchEvent) {
	if s.eventsLost || len(s.events)+len(evs) > maxEvents {
		s.events, s.eventsLost = nil, true
		return
	}
	s.events = append(s.events, evs...)
}

// eventsSince is Snapshot.Events for the snapshot being built, and starts
// afresh for the next one. After a relist the events say nothing a
// consumer can use: the list replaced what they did.
func (s *Source) eventsSince(relist bool) []types.WatchEvent {
	evs, lost := s.events, s.eventsLost
	s.events, s.eventsLost = nil, false
	switch {
	case relist || lost:
		return nil
	case evs == nil:
		return []types.WatchEvent{}
	}
	return evs
}

// touch records that the entry for name was replaced or forgotten.
func (s *Source) touch(name string) {
	if !s.touchedAll {
		s.touched[name] = struct{}{}
	}
}
