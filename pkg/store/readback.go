package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	v1 "k8s.io/api/core/v1"
)

// keyed is one live entry with its key.
type keyed struct {
	key string
	e   entry
}

// sortedLive returns the entries of live that keep accepts (all of them
// when keep is nil), oldest lastSeen first: the order Events lists them in
// and compaction writes them in.
func sortedLive(live map[string]entry, keep func(entry) bool) []keyed {
	ks := make([]keyed, 0, len(live))
	for k, e := range live {
		if keep == nil || keep(e) {
			ks = append(ks, keyed{k, e})
		}
	}
	sort.Slice(ks, func(i, j int) bool { return older(ks[i].key, ks[i].e, ks[j].key, ks[j].e) })
	return ks
}

// readRecord reads e's record from f into buf (grown as needed) and checks
// its frame and checksum. The error is an errRecord when the bytes read are
// not the record that was written there, any other error when they could
// not be read.
func readRecord(f *os.File, e entry, buf []byte) ([]byte, error) {
	if e.size <= 0 || e.size > maxRecordBytes {
		return buf, errRecord("record size out of range")
	}
	if int64(cap(buf)) < e.size {
		buf = make([]byte, e.size)
	}
	buf = buf[:e.size]
	if _, err := f.ReadAt(buf, e.off); err != nil {
		if errors.Is(err, io.EOF) {
			return buf, errRecord("record past the end of the log")
		}
		return buf, fmt.Errorf("read record at byte %d: %w", e.off, err)
	}
	if buf[len(buf)-1] != '\n' {
		return buf, errRecord("record does not end where it did")
	}
	if _, err := verifyRecord(buf[:len(buf)-1]); err != nil {
		return buf, err
	}
	return buf, nil
}

// readEvents decodes the records of ks from f, in the order of ks. A record
// that cannot be read or no longer verifies is left out; skipped says how
// many were and err why the first was, the first read error ahead of any
// record that did not verify.
func readEvents(f *os.File, ks []keyed) (evs []v1.Event, skipped int, err error) {
	evs = make([]v1.Event, 0, len(ks))
	var buf []byte
	for _, k := range ks {
		line, rerr := readRecord(f, k.e, buf)
		buf = line
		var ev *v1.Event
		if rerr == nil {
			ev, rerr = decodeRecord(line[:len(line)-1])
		}
		if rerr != nil {
			if err == nil || (isRecordError(err) && !isRecordError(rerr)) {
				err = fmt.Errorf("event %s: %w", k.key, rerr)
			}
			skipped++
			continue
		}
		evs = append(evs, *ev)
	}
	return evs, skipped, err
}
