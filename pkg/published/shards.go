package published

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/store"
)

// The files of the published state; see the package doc.
const (
	StateFile = "state.json"
	PodShards = 64
)

func shardOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % PodShards)
}

func shardName(i int) string { return fmt.Sprintf("pods-%02d.json", i) }

// Load reads the last published state from dir. An unreadable part costs
// what it held and no more: a lost shard, its pods (announced again); a lost
// state.json, what waited to settle (the salt is kept in every shard too).
// A pod whose digests were made under a salt no longer known keeps its
// hash, not its JSON, so its next UPDATE says it cannot name the fields
// rather than naming every hidden one as changed. A state.json that holds
// the pods itself, as one written before the shards did, still gives them.
// A state without a salt gets a new random one. A dir with no state at
// all gives diff.State.Inventory. A file a newer podwatch wrote is read
// with a warning; the error is a *NewerError when one cannot be read, and
// the caller must not go on to announce anything.
func Load(dir string, log *slog.Logger) (diff.State, error) {
	var file stateFile
	err := load(dir, StateFile, &file, log)
	state := file.State
	none := errors.Is(err, fs.ErrNotExist)
	switch {
	case err == nil:
	case errors.Is(err, ErrNewer):
		return diff.State{}, err
	case none:
		state = diff.State{}
	default:
		log.Warn("state.json unreadable: what waited to settle starts afresh; the published pods come from their shards", "err", err)
		state = diff.State{}
	}
	type loaded struct {
		pod  *diff.PodState
		salt []byte
	}
	pods := map[string]loaded{}
	shards := 0
	for i := range PodShards {
		var file stateFile
		err := load(dir, shardName(i), &file, log)
		part := file.State
		switch {
		case errors.Is(err, ErrNewer):
			return diff.State{}, err
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			log.Warn("published pods unreadable: the pods it held are announced again", "file", shardName(i), "err", err)
		}
		shards++
		if len(state.Salt) == 0 && len(part.Salt) > 0 {
			state.Salt = part.Salt
			log.Info("the published state's salt is taken from the pod shards", "file", shardName(i))
		}
		for k, p := range part.Pods {
			if shardOf(k) == i {
				pods[k] = loaded{p, part.Salt}
			}
		}
	}
	if shards > 0 || len(state.Pods) == 0 {
		state.Pods = map[string]*diff.PodState{}
		unsalted := 0
		for k, l := range pods {
			p := l.pod
			if len(l.salt) > 0 && !bytes.Equal(l.salt, state.Salt) || len(l.salt) == 0 && len(state.Salt) == 0 {
				q := *p
				q.JSON = nil // its digests cannot be compared any more
				p = &q
				unsalted++
			}
			state.Pods[k] = p
		}
		if unsalted > 0 {
			log.Warn("the salt of some published pods is lost: their next UPDATE cannot name the fields that changed", "pods", unsalted)
		}
	}
	// Nothing on disk: nothing was ever published here, and the first
	// step takes an inventory.
	state.Inventory = none && shards == 0
	if len(state.Salt) == 0 {
		// Keys the digests that stand for secrets on disk. Should the random
		// source fail, the digests are unkeyed: still no plaintext.
		state.Salt = make([]byte, 16)
		if _, err := rand.Read(state.Salt); err != nil {
			log.Warn("no random salt for the published state's digests", "err", err)
			state.Salt = nil
		}
	}
	return state, nil
}

// shardWriter writes states as state.json and the shards that changed
// since the last successful write. Only the Persister's goroutine uses it.
type shardWriter struct {
	dir string
	// written is what the shards on disk hold, by key; nil until every
	// shard was written once (which also replaces a run's older files).
	written map[string]*diff.PodState
	// scrubs counts the pods scrubbed, which is what a write costs.
	scrubs int
}

func (w *shardWriter) write(s diff.State) error {
	var dirty [PodShards]bool
	if w.written == nil {
		for i := range dirty {
			dirty[i] = true
		}
	} else {
		for k, p := range s.Pods {
			if w.written[k] != p { // published pods are never changed in place
				dirty[shardOf(k)] = true
			}
		}
		for k := range w.written {
			if _, ok := s.Pods[k]; !ok {
				dirty[shardOf(k)] = true
			}
		}
	}
	var parts [PodShards]map[string]*diff.PodState
	var prev [PodShards]map[string]*diff.PodState
	for k, p := range s.Pods {
		i := shardOf(k)
		if !dirty[i] {
			continue
		}
		if w.written[k] == p && prev[i] == nil {
			prev[i] = w.onDisk(i, s.Salt)
		}
		q, err := w.scrubbed(k, p, prev[i], s.Salt)
		if err != nil {
			return err
		}
		if parts[i] == nil {
			parts[i] = map[string]*diff.PodState{}
		}
		parts[i][k] = q
	}
	var errs []error
	var ok [PodShards]bool
	for i := range PodShards {
		if !dirty[i] {
			continue
		}
		// Every shard carries the salt, so losing state.json loses no digest.
		if err := store.SaveJSON(w.dir, shardName(i), stateFile{Version, diff.State{Pods: parts[i], Salt: s.Salt}}); err != nil {
			errs = append(errs, err)
			continue
		}
		ok[i] = true
	}
	rest := s
	rest.Pods = nil
	if err := store.SaveJSON(w.dir, StateFile, stateFile{Version, rest}); err != nil {
		errs = append(errs, err)
	}
	w.remember(s, ok, len(errs) == 0)
	return errors.Join(errs...)
}

// scrubbed is p as its shard holds it. A pod unchanged since its shard was
// last written is taken from that shard as read back (prev, nil if not),
// so that one new pod costs the scrub of one pod, not of every pod that
// shares its shard: the pod's fields from p, its scrubbed JSON from disk.
func (w *shardWriter) scrubbed(k string, p *diff.PodState, prev map[string]*diff.PodState, salt []byte) (*diff.PodState, error) {
	if old := prev[k]; old != nil && w.written[k] == p && len(old.JSON) > 0 {
		q := *p
		q.JSON = old.JSON
		return &q, nil
	}
	w.scrubs++
	return diff.ScrubbedPod(p, salt)
}

// onDisk reads shard i back, as this writer last wrote it; empty when it
// cannot be read or holds another salt, and every pod is scrubbed again.
func (w *shardWriter) onDisk(i int, salt []byte) map[string]*diff.PodState {
	var file stateFile
	if err := store.ReadJSON(w.dir, shardName(i), &file); err != nil || file.Version != Version || !bytes.Equal(file.Salt, salt) {
		return map[string]*diff.PodState{}
	}
	if file.Pods == nil {
		return map[string]*diff.PodState{}
	}
	return file.Pods
}

// remember records which pods the shards written hold; a shard that failed
// keeps its old entries, so the next write tries it again.
func (w *shardWriter) remember(s diff.State, ok [PodShards]bool, all bool) {
	if w.written == nil {
		if !all {
			return // every shard is written again next time
		}
		w.written = make(map[string]*diff.PodState, len(s.Pods))
	}
	for k := range w.written {
		if _, kept := s.Pods[k]; !kept && ok[shardOf(k)] {
			delete(w.written, k)
		}
	}
	for k, p := range s.Pods {
		if ok[shardOf(k)] {
			w.written[k] = p
		}
	}
}
