package diff

import (
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// evGone and evWrote are watch events as the file source sends them: a
// name gone, and a name written, created, chmod-ed or moved in.
func evGone(name string) types.WatchEvent { return types.WatchEvent{Name: name, Gone: true} }

func evWrote(name string) types.WatchEvent { return types.WatchEvent{Name: name} }

// saveAt is ms milliseconds into the minute after t0: when the editor
// tests' saves happen, well after the first list.
func saveAt(ms int) time.Time { return t0.Add(time.Minute + time.Duration(ms)*time.Millisecond) }
