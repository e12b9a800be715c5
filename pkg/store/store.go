package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/podwatch/podwatch/pkg/events"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// File names in the state dir.
const (
	logName    = "events.log"
	tmpLogName = "events.log.tmp" // a compaction in progress; only the writer uses it
)

// Store is the event log of one state dir, held open for writing. It is a
// Sink for pkg/events. It is safe for concurrent use.
type Store struct {
	dir   string
	path  string
	opts  Options
	clock clock.PassiveClock
	log   *slog.Logger
	// sync makes an append durable. It is a field so that benchmarks can
	// measure the cost of the disk flush apart from the rest.
	sync func(*os.File) error

	mu   sync.Mutex
	lock *os.File // holds the flock; nil once closed
	// f is the log, written by size rather than O_APPEND, and read back
	// for what live points at; nil once closed. A read-only store only
	// reads it.
	f    *os.File
	size int64 // bytes of verified records in f; the next append goes here
	live map[string]entry
	// liveBytes is the size of the live set's records; size - liveBytes is dead.
	liveBytes int64
	// rewrite is set when an append failed: the tail of the file, or data
	// an earlier fsync reported lost, cannot be trusted, so the live set
	// is written to a new file before anything else is appended.
	rewrite bool
	// compactAfter holds off a retry after a failed compaction until the log
	// has grown, rather than retrying on every write of a full disk.
	compactAfter int64
	compactions  int
	// readOnly: opened by OpenReadOnly, every write fails with ErrReadOnly.
	readOnly bool
}

// Open opens (creating it if needed) the event store in dir, replays its
// log and locks dir against a second writer.
//
// It returns:
//   - (s, nil): the store is ready.
//   - (s, err) with err matching ErrCorrupt (a *CorruptError): the log was
//     damaged in the middle. It was set aside, s holds the Events that still
//     verified in a fresh log and is fully usable; err is a warning to log.
//   - (nil, err): there is no store. err matches ErrLocked (a *LockedError
//     naming the holder) when another process holds dir, or wraps the OS
//     error (fs.ErrPermission, syscall.ENOTDIR, syscall.EROFS...) naming dir
//     when the folder cannot be created, locked, read or written; one that
//     can still be read may be opened with OpenReadOnly.
//
// A torn last record, which a crash during an append leaves, is not an
// error: it is dropped and logged. clk defaults to the real clock and log
// to a discarding logger.
func Open(dir string, opts Options, clk clock.PassiveClock, log *slog.Logger) (*Store, error) {
	clk, log, err := openArgs(dir, opts, clk, log)
	if err != nil {
		return nil, err
	}
	// 0700: the state holds pod specs, which can carry secrets in env.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	lock, err := lockDir(dir, self(opts.Pod, clk.Now()))
	if err != nil {
		return nil, err
	}
	s := newStore(dir, opts, clk, log, lock)
	s.sync = fdatasync
	warning, err := s.load()
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	return s, warning
}

// newStore is a store on dir holding lock, with nothing loaded.
func newStore(dir string, opts Options, clk clock.PassiveClock, log *slog.Logger, lock *os.File) *Store {
	return &Store{
		dir:   dir,
		path:  filepath.Join(dir, logName),
		opts:  opts.withDefaults(),
		clock: clk,
		log:   log,
		lock:  lock,
		live:  map[string]entry{},
	}
}

// load replays the log into s. warning is a *CorruptError when the log had
// to be set aside; err means there is no usable store.
func (s *Store) load() (warning, err error) {
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", s.dir, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = &os.PathError{Op: "open", Path: s.path, Err: errNotRegular}
		}
		return nil, fmt.Errorf("store: state dir %s: %w", s.dir, err)
	}
	// Make the log's creation durable, or a crash could lose a file whose
	// records were each fsynced.
	if err := syncDir(s.dir); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store: state dir %s: %w", s.dir, err)
	}
	r, err := scanLog(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store: %s: %w", s.path, err)
	}
	s.live, s.liveBytes = r.live, r.liveBytes

	if r.corrupt() {
		cerr := &CorruptError{Path: s.path, Offset: r.bad, Reason: r.badWhy, Kept: len(r.live)}
		aside, err := setAside(s.path, s.clock.Now())
		cerr.SetAside = aside
		if aside == "" {
			_ = f.Close()
			return nil, errors.Join(cerr, fmt.Errorf("store: %w", err))
		}
		// compact copies the salvaged live set from the set-aside file,
		// still open as f, to the new events.log.
		s.f = f
		if err := s.compact(); err != nil {
			_ = f.Close()
			s.f = nil
			return nil, errors.Join(cerr, err)
		}
		return cerr, nil
	}

	if r.tornTail() {
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("store: %s: %w", s.path, err)
		}
		if err := f.Truncate(r.good); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("store: drop torn tail of %s: %w", s.path, err)
		}
		if err := s.sync(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("store: drop torn tail of %s: %w", s.path, err)
		}
		s.log.Warn("event log ended in an incomplete record, as a crash during a write leaves it; dropped it",
			"path", s.path, "offset", r.good, "bytes", fi.Size()-r.good, "reason", r.badWhy)
	}
	s.f, s.size = f, r.good
	// Leftover of a compaction a crash interrupted; the next compaction
	// truncates it anyway, so failing to remove it is harmless.
	_ = os.Remove(filepath.Join(s.dir, tmpLogName))

	if dropped := s.prune(s.clock.Now()); dropped > 0 || s.shouldCompact() {
		s.tryCompact()
	}
	return nil, nil
}

// Write appends ev to the log and returns once it is on disk (fdatasync).
// It implements pkg/events' Sink; update is not needed, the latest record
// of an Event wins. ctx is not consulted: the write is local and short, and
// an Event recorded during shutdown should still reach the disk.
func (s *Store) Write(_ context.Context, ev *v1.Event, _ bool) error {
	return s.write([]*v1.Event{ev})
}

// WriteBatch appends every Event of writes with one write and one
// fdatasync: all of them are on disk when it returns nil, none of them
// when it fails. It implements pkg/events' BatchSink.
func (s *Store) WriteBatch(_ context.Context, writes []events.Write) error {
	evs := make([]*v1.Event, len(writes))
	for i, w := range writes {
		evs[i] = w.Event
	}
	return s.write(evs)
}

func (s *Store) write(evs []*v1.Event) error {
	for _, ev := range evs {
		if ev == nil || ev.Name == "" {
			return errors.New("store: write: event has no name")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return ErrReadOnly
	}
	if s.f == nil {
		return ErrClosed
	}
	if s.rewrite {
		if err := s.compact(); err != nil {
			return fmt.Errorf("store: write %s: rewrite %s after an earlier failed write: %w", describe(evs), s.path, err)
		}
	}
	put, err := s.appendRecords(evs)
	if err != nil {
		return err
	}
	for _, k := range put {
		putEntry(s.live, &s.liveBytes, k.key, k.e)
	}
	// Evicted Events are still in the log, where ReadEvents would list
	// them: compact them away at once, whatever the log's size.
	if s.evict() > 0 || s.shouldCompact() {
		s.tryCompact()
	}
	return nil
}

// writeChunk is how much of a write's records is encoded before it is
// written out: a batch of a thousand Events is a megabyte of records,
// which need not be in memory at once on its way to the file.
const writeChunk = 64 << 10

// appendRecords writes the records of evs at the end of the verified data,
// a chunk at a time, then flushes them with one fdatasync, and returns
// where each one is. On failure it cuts the file back, so that a
// half-written batch never ends up in the middle of the log where it would
// read as corruption, and none of the batch counts as written. Call with
// s.mu held.
func (s *Store) appendRecords(evs []*v1.Event) ([]keyed, error) {
	put := make([]keyed, len(evs))
	buf := make([]byte, 0, writeChunk)
	off := s.size // where buf starts in the file
	fail := func(err error, wrote bool) ([]keyed, error) {
		if wrote {
			if terr := s.f.Truncate(s.size); terr != nil {
				s.rewrite = true
			}
		}
		return nil, err
	}
	wrote := false
	for i, ev := range evs {
		start := len(buf)
		var err error
		if buf, err = appendRecord(buf, ev); err != nil {
			return fail(err, wrote)
		}
		put[i] = keyed{eventKey(ev), entry{off: off + int64(start), size: int64(len(buf) - start), last: stamp(lastSeen(ev))}}
		if len(buf) >= writeChunk || i == len(evs)-1 {
			wrote = true
			if _, err := s.f.WriteAt(buf, off); err != nil {
				s.rewrite = true
				return fail(fmt.Errorf("store: write %s to %s: %w", describe(evs), s.path, err), wrote)
			}
			off += int64(len(buf))
			buf = buf[:0]
		}
	}
	if err := s.sync(s.f); err != nil {
		s.rewrite = true
		return fail(fmt.Errorf("store: write %s to %s: %w", describe(evs), s.path, err), wrote)
	}
	s.size = off
	return put, nil
}

// describe names the Events of one write for an error message.
func describe(evs []*v1.Event) string {
	if len(evs) == 1 {
		return "event " + eventKey(evs[0])
	}
	return fmt.Sprintf("%d events (first %s)", len(evs), eventKey(evs[0]))
}

// Events returns the live Events not older than the TTL, oldest
// lastTimestamp first, read back from the log. A record that cannot be
// read back is left out and logged. After Close it reads the log as
// ReadEvents does, less what is past the TTL: the last live set, unless
// another process has opened the folder since.
func (s *Store) Events() []v1.Event {
	cutoff := stamp(s.clock.Now().Add(-s.opts.TTL))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.closedEvents(cutoff)
	}
	evs, skipped, err := readEvents(s.f, sortedLive(s.live, func(e entry) bool { return e.last >= cutoff }))
	if err != nil {
		s.log.Warn("cannot read back events from the event log; left out", "path", s.path, "events", skipped, "err", err)
	}
	return evs
}

// closedEvents is Events after Close.
func (s *Store) closedEvents(cutoff int64) []v1.Event {
	evs, err := ReadEvents(s.dir)
	if err != nil {
		s.log.Warn("cannot read the event log of a closed store", "path", s.path, "err", err)
		return nil
	}
	kept := evs[:0]
	for _, ev := range evs {
		if stamp(lastSeen(&ev)) >= cutoff {
			kept = append(kept, ev)
		}
	}
	return kept
}

// Close closes the log and releases the state dir. Every record is already
// on disk. Writes after Close fail with ErrClosed; Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	var err error
	if s.f != nil {
		err = s.f.Close()
		s.f = nil
	}
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	s.lock = nil
	if err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// openArgs checks what Open and OpenReadOnly were given and fills in the
// defaults: the real clock, a discarding logger.
func openArgs(dir string, opts Options, clk clock.PassiveClock, log *slog.Logger) (clock.PassiveClock, *slog.Logger, error) {
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	if dir == "" {
		return nil, nil, errors.New("store: state dir is empty")
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return clk, log, nil
}
