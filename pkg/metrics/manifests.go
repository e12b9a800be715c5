package metrics

import (
	"sync"

	"github.com/podwatch/podwatch/pkg/types"
)

// manifestsCollector serves podwatch_manifests. It counts the entries of
// the last snapshot when scraped, not when the snapshot arrives: counting
// costs a map insert per manifest, and a change in a folder of thousands
// must not pay it on its way to the event.
type manifestsCollector struct {
	meta
	mu    sync.Mutex
	files []*types.File // the last snapshot's; snapshots are never modified
}

func newManifestsCollector() *manifestsCollector {
	return &manifestsCollector{meta: meta{name: "podwatch_manifests", typ: typeGauge, labels: []string{"state"},
		help: "Entries of the manifest path by state (valid, invalid, duplicate, unreadable, not_regular), as of the last snapshot."}}
}

func (c *manifestsCollector) observe(files []*types.File) {
	c.mu.Lock()
	c.files = files
	c.mu.Unlock()
}

func (c *manifestsCollector) collect(emit func(string, []string, float64)) {
	c.mu.Lock()
	files := c.files
	c.mu.Unlock()
	counts := countStates(files)
	for i, st := range manifestStates() {
		emit("", c.pairs([]string{st}), float64(counts[i]))
	}
}

// countStates counts files by their index in manifestStates: of the valid
// files defining one pod, one counts as valid and the others as duplicates.
func countStates(files []*types.File) [numStates]int {
	var counts [numStates]int
	seen := make(map[string]struct{}, len(files))
	for _, f := range files {
		switch {
		case f.NotRegular:
			counts[4]++
		case f.ReadErr != nil:
			counts[3]++
		case f.Pod == nil:
			counts[1]++
		default:
			if _, dup := seen[f.Pod.Key]; dup {
				counts[2]++
				continue
			}
			seen[f.Pod.Key] = struct{}{}
			counts[0]++
		}
	}
	return counts
}
