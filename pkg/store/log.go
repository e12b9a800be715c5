package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
)

// entry is the latest version of one Event and the size of its record,
// so the store knows how much of the file is live.
type entry struct {
	ev   *v1.Event
	size int64
}

// replay is what a pass over a log found.
type replay struct {
	live      map[string]*entry
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

// scanLog replays a log from r, keeping the latest version of each Event.
// It reads every line, even past damage, so that it can tell a torn tail
// from corruption and salvage what still verifies. Only read errors are
// returned; the content cannot make it fail.
func scanLog(r io.Reader) (*replay, error) {
	res := &replay{live: map[string]*entry{}, bad: -1}
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
			res.put(ev, n)
		}
		off += n
		if err != nil {
			return res, nil
		}
	}
}

// put makes ev the latest version of its Event.
func (r *replay) put(ev *v1.Event, size int64) {
	k := eventKey(ev)
	if old, ok := r.live[k]; ok {
		r.liveBytes -= old.size
	}
	r.live[k] = &entry{ev: ev, size: size}
	r.liveBytes += size
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
