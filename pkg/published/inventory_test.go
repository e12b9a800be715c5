package published

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/podwatch/podwatch/pkg/diff"
)

// An empty state dir is a first start, an inventory; one that holds a
// published state, even of no pods, or only a pod shard, is not.
func TestLoadInventoryOnlyWithNothingOnDisk(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	Load := func(dir string, log *slog.Logger) diff.State {
		t.Helper()
		s, err := Load(dir, log)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	empty := t.TempDir()
	if !Load(empty, log).Inventory {
		t.Error("an empty state dir: no inventory")
	}
	none := t.TempDir()
	w := shardWriter{dir: none}
	if err := w.write(diff.State{Salt: []byte("salt")}); err != nil {
		t.Fatal(err)
	}
	if Load(none, log).Inventory {
		t.Error("a published state of no pods: inventory")
	}
	shardOnly := t.TempDir()
	w = shardWriter{dir: shardOnly}
	if err := w.write(diff.State{Pods: podStates(3, "img:1"), Salt: []byte("salt")}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(shardOnly, StateFile)); err != nil {
		t.Fatal(err)
	}
	if got := Load(shardOnly, log); got.Inventory || len(got.Pods) != 3 {
		t.Errorf("pod shards without state.json: inventory %v, %d pods; want false, 3", got.Inventory, len(got.Pods))
	}
}
