package store

import (
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// ReadEvents returns the Events in the log in dir, latest version of each,
// oldest lastTimestamp first. It takes no lock and may run while an agent
// writes: it reads the one file it opened to the end, and skips a last
// record still being written. Since compaction renames a complete file over
// the log, that file is always a whole log, old or new.
//
// It skips records that do not verify instead of failing, as the writer
// will set a damaged log aside on its next Open. It does not apply the
// writer's TTL: Events past it are listed until the writer's next
// compaction. The writer compacts as soon as it drops Events for MaxEvents,
// so more than MaxEvents are listed only while a write that went past it is
// being compacted, or when the compaction failed. A dir without a log
// returns an error matching fs.ErrNotExist.
func ReadEvents(dir string) ([]v1.Event, error) {
	f, err := openRegular(filepath.Join(dir, logName))
	if err != nil {
		return nil, fmt.Errorf("store: read events in %s: %w", dir, err)
	}
	defer f.Close()
	r, err := scanLog(f)
	if err != nil {
		return nil, fmt.Errorf("store: read events in %s: %w", dir, err)
	}
	// A record that verified in the scan and then does not is skipped like
	// any other that does not verify.
	evs, _, err := readEvents(f, sortedLive(r.live, nil))
	if err != nil && !isRecordError(err) {
		return nil, fmt.Errorf("store: read events in %s: %w", dir, err)
	}
	return evs, nil
}
