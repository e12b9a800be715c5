package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
)

// A record is one line:
//
//	<crc32c of json, 8 lowercase hex> <len of json, decimal> <json>\n
//
// The length catches a line cut short, the CRC a line with damaged bytes,
// and the newline lets a reader skip to the next record after either.
// encoding/json never emits a raw newline, so the JSON cannot contain one.

// maxRecordBytes bounds one record. An Event is about a kilobyte; the
// bound keeps a garbage file from making a reader buffer it whole.
const maxRecordBytes = 1 << 20

// checksum is CRC-32C, which CPUs compute in hardware. MakeTable returns
// the standard library's shared table for it, so this allocates nothing.
func checksum(data []byte) uint32 {
	return crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
}

// encodeRecord frames ev as one record line.
func encodeRecord(ev *v1.Event) ([]byte, error) {
	return appendRecord(nil, ev)
}

// appendRecord appends ev's record line to buf. On error buf is returned
// as it was.
func appendRecord(buf []byte, ev *v1.Event) ([]byte, error) {
	data, err := json.Marshal(ev)
	if err != nil {
		return buf, fmt.Errorf("store: encode event %s: %w", eventKey(ev), err)
	}
	start := len(buf)
	buf = fmt.Appendf(buf, "%08x %d ", checksum(data), len(data))
	buf = append(buf, data...)
	buf = append(buf, '\n')
	if n := len(buf) - start; n > maxRecordBytes {
		return buf[:start], fmt.Errorf("store: event %s is %d bytes encoded, over the %d limit", eventKey(ev), n, maxRecordBytes)
	}
	return buf, nil
}

// errRecord is why a line is not a record; its text ends up in CorruptError.
type errRecord string

func (e errRecord) Error() string { return string(e) }

// isRecordError reports whether err says bytes were not a record, rather
// than that they could not be read.
func isRecordError(err error) bool {
	var bad errRecord
	return errors.As(err, &bad)
}

// verifyRecord checks one line without its newline: its frame and its
// checksum. It returns the JSON it frames. It never panics, whatever the
// bytes.
func verifyRecord(line []byte) ([]byte, error) {
	crcField, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(crcField) != 8 {
		return nil, errRecord("no checksum")
	}
	want, err := strconv.ParseUint(string(crcField), 16, 32)
	if err != nil {
		return nil, errRecord("bad checksum field")
	}
	lenField, data, ok := bytes.Cut(rest, []byte{' '})
	if !ok || len(lenField) == 0 || len(lenField) > 7 {
		return nil, errRecord("no length")
	}
	n, err := strconv.Atoi(string(lenField))
	if err != nil || n != len(data) {
		return nil, errRecord("length does not match")
	}
	if checksum(data) != uint32(want) {
		return nil, errRecord("checksum mismatch")
	}
	return data, nil
}

// decodeRecord parses one line without its newline. It never panics,
// whatever the bytes.
func decodeRecord(line []byte) (*v1.Event, error) {
	data, err := verifyRecord(line)
	if err != nil {
		return nil, err
	}
	var ev v1.Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, errRecord("checksum matches but the event does not decode")
	}
	if ev.Name == "" {
		return nil, errRecord("event has no name")
	}
	return &ev, nil
}

// eventKey identifies an Event the way the apiserver does.
func eventKey(ev *v1.Event) string {
	return ev.Namespace + "/" + ev.Name
}

// lastSeen is when an Event last happened. core/v1 Events written by
// podwatch set lastTimestamp; the fallbacks keep events.k8s.io-style
// Events (eventTime only) from looking infinitely old.
func lastSeen(ev *v1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}
