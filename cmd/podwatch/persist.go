package main

import (
	"context"
	"log/slog"

	"github.com/podwatch/podwatch/pkg/diff"
)

// persister writes the published state to the state dir off the loop: a
// write scrubs and saves the shards a change touched (all 64 the first time:
// at 23 µs a pod, a quarter of a second with 10,000), and the next change
// must not wait for it. Only the newest state handed over is written.
type persister struct {
	log  *slog.Logger
	next chan diff.State // capacity 1: a state not yet written is replaced
	w    shardWriter     // owned by Run's goroutine
}

func newPersister(dir string, log *slog.Logger) *persister {
	return &persister{log: log, next: make(chan diff.State, 1), w: shardWriter{dir: dir}}
}

// Save hands s over to be written, replacing a state still waiting. It
// never blocks. Only one goroutine (the loop) may call it; s must not be
// changed afterwards (diff.Compute returns a new State each time).
func (p *persister) Save(s diff.State) {
	select {
	case <-p.next:
	default:
	}
	p.next <- s
}

// Run writes states as they are handed over until ctx ends, then writes the
// last one handed over before that, so a clean shutdown leaves the newest
// state on disk.
func (p *persister) Run(ctx context.Context) error {
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

func (p *persister) write(s diff.State) {
	if err := p.w.write(s); err != nil {
		p.log.Warn("cannot save published state", "err", err)
	}
}

// awaitSaved waits for the persister's last write until ctx ends. A write
// still going then is abandoned to the exiting process: the next start
// announces again what changed since the last state that was saved.
func awaitSaved(ctx context.Context, done <-chan error, log *slog.Logger) {
	select {
	case <-done:
		return // saved, even if the flush used up the timeout
	default:
	}
	select {
	case <-done:
	case <-ctx.Done():
		log.Warn("published state not saved before --shutdown-timeout; the next start announces again what changed since the last save")
	}
}
