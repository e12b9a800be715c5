package published

import (
	"context"
	"log/slog"

	"github.com/podwatch/podwatch/pkg/diff"
)

// Persister writes the published state to the state dir off the diff loop:
// a write scrubs and saves the shards a change touched (all of them the
// first time), and the next change must not wait for it. Only the newest
// state handed over is written.
type Persister struct {
	log  *slog.Logger
	next chan diff.State // capacity 1: a state not yet written is replaced
	w    shardWriter     // owned by Run's goroutine
}

// NewPersister writes into dir; Run starts it.
func NewPersister(dir string, log *slog.Logger) *Persister {
	return &Persister{log: log, next: make(chan diff.State, 1), w: shardWriter{dir: dir}}
}

// Save hands s over to be written, replacing a state still waiting. It
// never blocks. Only one goroutine (the loop) may call it; s must not be
// changed afterwards (diff.Compute returns a new State each time).
func (p *Persister) Save(s diff.State) {
	select {
	case <-p.next:
	default:
	}
	p.next <- s
}

// Run writes states as they are handed over until ctx ends, then writes the
// last one handed over before that, so a clean shutdown leaves the newest
// state on disk.
func (p *Persister) Run(ctx context.Context) error {
	for {
		select {
		case s := <-p.next:
			p.write(s)
		case <-ctx.Done():
			select {
			case s := <-p.next:
				p.write(s)
			default:
			}
			return nil
		}
	}
}

func (p *Persister) write(s diff.State) {
	if err := p.w.write(s); err != nil {
		p.log.Warn("cannot save published state", "err", err)
	}
}
