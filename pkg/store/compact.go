package store

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// shouldCompact reports whether the log should be rewritten to its live
// set. The first rule bounds the file; requiring as much dead data as
// live keeps a large live set from triggering a rewrite on every write.
// The second rewrites a log that is mostly history early, so a small
// live set does not drag megabytes of old records through every Open.
func (s *Store) shouldCompact() bool {
	if s.size < s.compactAfter {
		return false
	}
	dead := s.size - s.liveBytes
	switch {
	case s.size >= s.opts.MaxLogBytes:
		return dead >= s.liveBytes
	case s.size >= s.opts.MaxLogBytes/8:
		return dead >= 4*s.liveBytes
	}
	return false
}

// prune drops Events past the TTL, then the oldest past MaxEvents (see
// evict), and says how many went. Their records become dead data.
func (s *Store) prune(now time.Time) int {
	n := len(s.live)
	cutoff := stamp(now.Add(-s.opts.TTL))
	for k, e := range s.live {
		if e.last < cutoff {
			delete(s.live, k)
			s.liveBytes -= e.size
		}
	}
	s.evict()
	return n - len(s.live)
}

// evict drops the Events with the oldest lastTimestamp once more than
// MaxEvents are live, and says how many went. It drops a tenth of MaxEvents
// at once, not just the one over: the caller compacts right after, so that
// the log, which readers list in full, never holds more than MaxEvents
// either, and a steady stream of new Events costs one rewrite of the live
// set per tenth of MaxEvents rather than one per Event.
func (s *Store) evict() int {
	if len(s.live) <= s.opts.MaxEvents {
		return 0
	}
	over := len(s.live) - (s.opts.MaxEvents - s.opts.MaxEvents/10)
	if over == 1 {
		var oldest string
		var oe entry
		found := false
		for k, e := range s.live {
			if !found || older(k, e, oldest, oe) {
				oldest, oe, found = k, e, true
			}
		}
		delete(s.live, oldest)
		s.liveBytes -= oe.size
		return 1
	}
	for _, k := range sortedLive(s.live, nil)[:over] {
		s.liveBytes -= k.e.size
		delete(s.live, k.key)
	}
	return over
}

// tryCompact compacts when the log asks for it but is not a failure of
// the write that triggered it: the log is whole either way, only larger.
func (s *Store) tryCompact() {
	if err := s.compact(); err != nil {
		s.compactAfter = s.size + s.opts.MaxLogBytes/8
		s.log.Warn("cannot compact the event log; it grows until a later try succeeds", "path", s.path, "err", err)
	}
}

// compact copies the live records from the log to a new file and renames
// it over the log. A reader that opened the old log keeps reading a whole
// file; one that opens the new name gets a whole file too, as it is
// complete and durable before the rename. On failure the current log stays
// in use untouched.
//
// The records are read back from the current log (s.f) and copied as they
// are, each checked against its checksum first. One that no longer
// verifies, which only a disk that lost data it had confirmed can cause, is
// left out and logged: failing instead would leave a log that must be
// rewritten (after a failed append) unable to take any write again.
func (s *Store) compact() error {
	if s.f == nil {
		return ErrClosed
	}
	s.prune(s.clock.Now())
	// Oldest first, as if appended in order: a reader that stops early,
	// and a future Open that evicts, agree on what is newest.
	ks := sortedLive(s.live, nil)

	tmpPath := filepath.Join(s.dir, tmpLogName)
	tmp, err := os.OpenFile(tmpPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	fail := func(err error) error {
		_ = tmp.Close()
		_ = os.Remove(tmpPath)
		return fmt.Errorf("store: compact %s: %w", s.path, err)
	}
	moved := make([]keyed, 0, len(ks))
	var lost []string
	var firstLost error
	var total int64
	var buf []byte
	w := bufio.NewWriterSize(tmp, 64<<10)
	for _, k := range ks {
		line, err := readRecord(s.f, k.e, buf)
		buf = line
		if isRecordError(err) {
			lost = append(lost, k.key)
			if firstLost == nil {
				firstLost = err
			}
			continue
		}
		if err != nil {
			return fail(err)
		}
		if _, err := w.Write(line); err != nil {
			return fail(err)
		}
		moved = append(moved, keyed{k.key, entry{off: total, size: int64(len(line)), last: k.e.last}})
		total += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	renamed, err := commitFile(tmp, s.path)
	if err != nil && !renamed {
		return fail(err)
	}
	if err != nil {
		// The new file is the log now: keep using it. Only whether the
		// rename survives a crash is in doubt, and either file is whole.
		s.log.Warn("compacted the event log but cannot sync its folder", "path", s.path, "err", err)
	}
	if len(lost) > 0 {
		s.log.Warn("event records no longer verify in the log; the compacted log leaves them out",
			"path", s.path, "events", len(lost), "first", lost[0], "reason", firstLost)
	}

	for _, k := range lost {
		delete(s.live, k)
	}
	for _, k := range moved {
		s.live[k.key] = k.e
	}
	if s.f != nil {
		_ = s.f.Close()
	}
	s.f, s.size, s.liveBytes = tmp, total, total
	s.rewrite, s.compactAfter = false, 0
	s.compactions++
	return nil
}
