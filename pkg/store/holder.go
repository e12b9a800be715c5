package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lockName is the lock file in the state dir. It is never removed: removing
// it would let a second process lock a new inode while the first still
// holds the old one.
const lockName = "lock"

func lockPath(dir string) string { return filepath.Join(dir, lockName) }

// maxHolderBytes bounds what is read of a lock file: a holder's JSON is a
// few hundred bytes; anything far bigger was not written by podwatch.
const maxHolderBytes = 4 << 10

// Holder says which podwatch holds a state dir's lock, as it wrote it into
// the lock file. A pid means little across pid namespaces (a DaemonSet's
// pod and a systemd unit on one node), so the host and pod names and the
// start time are what tell an operator which process it is. Any field may
// be empty: a lock file written by an older podwatch holds the pid alone.
type Holder struct {
	Host    string    `json:"host,omitempty"`
	Pod     string    `json:"pod,omitempty"`
	Started time.Time `json:"started,omitzero"`
	PID     int       `json:"pid,omitempty"`
}

// String names the holder for a person: pod, host and start time, and the
// pid when nothing else is known. Empty when nothing is.
func (h Holder) String() string {
	var parts []string
	if h.Pod != "" {
		parts = append(parts, "pod "+h.Pod)
	}
	if h.Host != "" {
		parts = append(parts, "host "+h.Host)
	}
	if !h.Started.IsZero() {
		parts = append(parts, "started "+h.Started.UTC().Format(time.RFC3339))
	}
	if h.PID > 0 && (len(parts) == 0 || h.Host != "") {
		parts = append(parts, "pid "+strconv.Itoa(h.PID))
	}
	return strings.Join(parts, ", ")
}

// self is the Holder this process writes into a lock it takes.
func self(pod string, now time.Time) Holder {
	host, _ := os.Hostname()
	return Holder{Host: host, Pod: pod, Started: now, PID: os.Getpid()}
}

// encodeHolder is the lock file's content for h.
func encodeHolder(h Holder) []byte {
	b, err := json.Marshal(h)
	if err != nil {
		// A Holder of strings, a time and an int always encodes; the
		// pid alone is still worth writing should it not.
		return []byte(strconv.Itoa(h.PID) + "\n")
	}
	return append(b, '\n')
}

// parseHolder reads a lock file's content: a Holder's JSON, or the bare pid
// an older podwatch wrote. ok is false when it is neither.
func parseHolder(b []byte) (h Holder, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > maxHolderBytes {
		return Holder{}, false
	}
	if b[0] == '{' {
		if err := json.Unmarshal(b, &h); err != nil {
			return Holder{}, false
		}
		return h, true
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil || pid <= 0 {
		return Holder{}, false
	}
	return Holder{PID: pid}, true
}

// readHolder returns the holder named in dir's lock file. It takes no lock,
// and a file that holds neither form gives an error; the holder it names
// may have stopped since, as the kernel drops the lock of a dead process
// but nothing clears the file.
func readHolder(dir string) (Holder, error) {
	path := lockPath(dir)
	f, err := openRegular(path)
	if err != nil {
		return Holder{}, fmt.Errorf("store: read lock holder: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHolderBytes+1))
	if err != nil {
		return Holder{}, fmt.Errorf("store: read lock holder %s: %w", path, err)
	}
	h, ok := parseHolder(b)
	if !ok {
		return Holder{}, fmt.Errorf("store: lock file %s names no holder", path)
	}
	return h, nil
}
