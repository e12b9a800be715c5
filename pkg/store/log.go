package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
)

// entry is where the latest record of one Event is in the log, and when the
// Event last happened. The Event itself stays on disk: the store reads it
// back to list or compact it, so its memory does not grow with the Events
// it holds beyond this and the key.
type entry struct {
	off  int64 // the record's first byte in the log
	size int64 // the record's length, newline included
	last int64 // lastSeen as stamp gives it, for the TTL and eviction order
}

// stamp is t in Unix nanoseconds, clamped to what an int64 holds: an Event
// with no timestamp at all (the year 1) sorts first instead of wrapping.
func stamp(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// older orders entries by lastSeen, then by key so the order is total.
func older(ka string, a entry, kb string, b entry) bool {
	if a.last != b.last {
		return a.last < b.last
	}
	return ka < kb
}

// replay is what a pass over a log found.
type replay struct {
	live      map[string]entry
	liveBytes int64
	// good is the offset just past the last record that verified.
	good int64
	// bad is the offset of the first line that did not verify, or -1.
	bad    int64
	badWhy string
	// badIsLast says the bad line is the file's last and no longer than a
	// record: what a crash during an append leaves (the record cut short,
	// or its blocks allocated but never written, reading as zeros).
	// Anything more, such as a bad line followed by others, no crash of
	// this writer can produce: that is corruption.
	badIsLast bool
}

// tornTail reports whether the only damage is a torn last append.
func (r *replay) tornTail() bool { return r.bad >= 0 && r.badIsLast }

// corrupt reports damage that is not a torn tail.
func (r *replay) corrupt() bool { return r.bad >= 0 && !r.badIsLast }

// scanLog replays a log from r, keeping where the latest record of each
// Event is. It reads every line, even past damage, so that it can tell a
// torn tail from corruption and salvage what still verifies. Only read
// errors are returned; the content cannot make it fail.
func scanLog(r io.Reader) (*replay, error) {
	res := &replay{live: map[string]entry{}, bad: -1}
	br := bufio.NewReaderSize(r, maxRecordBytes)
	var off int64
	for {
		line, n, tooLong, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read at byte %d: %w", off, err)
		}
		if n == 0 && err != nil {
			return res, nil
		}
		var ev *v1.Event
		var why error
		switch {
		case tooLong:
			why = errRecord("line longer than any record")
		case line[len(line)-1] != '\n':
			// Only the last line can lack a newline: an append in progress
			// or cut short.
			why = errRecord("incomplete last record")
		default:
			ev, why = decodeRecord(line[:len(line)-1])
		}
		if res.bad >= 0 {
			res.badIsLast = false
		}
		if why != nil {
			if res.bad < 0 {
				res.bad, res.badWhy, res.badIsLast = off, why.Error(), !tooLong
			}
		} else {
			if res.bad < 0 {
				res.good = off + n
			}
			// Records after damage still verified: keep them, so that a
			// set-aside log loses as little as possible.
			putEntry(res.live, &res.liveBytes, eventKey(ev), entry{off: off, size: n, last: stamp(lastSeen(ev))})
		}
		off += n
		if err != nil {
			return res, nil
		}
	}
}

// putEntry makes e the latest record of the Event k in live, keeping the
// count of live bytes.
func putEntry(live map[string]entry, liveBytes *int64, k string, e entry) {
	if old, ok := live[k]; ok {
		*liveBytes -= old.size
	}
	live[k] = e
	*liveBytes += e.size
}

// readLine returns the next line with its newline, or the rest of the input
// at EOF, and how many bytes it consumed. A line longer than the reader's
// buffer is consumed whole but not returned (tooLong), so that a garbage
// file cannot make the reader hold it in memory.
func readLine(br *bufio.Reader) (line []byte, n int64, tooLong bool, err error) {
	line, err = br.ReadSlice('\n')
	n = int64(len(line))
	for errors.Is(err, bufio.ErrBufferFull) {
		tooLong = true
		var more []byte
		more, err = br.ReadSlice('\n')
		n += int64(len(more))
	}
	if tooLong {
		line = nil
	}
	return line, n, tooLong, err
}
