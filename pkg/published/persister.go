package published

import (
	"context"
	"log/slog"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/diff"
)

// Retry delays after a failed save: soon enough that a disk freed again is
// used within seconds, rare enough that a full disk is not hammered.
// RetryMax is the longest wait between two attempts.
const (
	retryInitial = time.Second
	RetryMax     = 30 * time.Second
)

// Persister writes the published state to the state dir off the diff loop:
// a write scrubs and saves the shards a change touched (all of them the
// first time), and the next change must not wait for it. Only the newest
// state handed over is written, and a state that failed to save is tried
// again until it is saved or a newer one replaces it, so the state on disk
// converges as soon as the disk allows.
type Persister struct {
	log  *slog.Logger
	clk  clock.WithTicker
	next chan diff.State // capacity 1: a state not yet written is replaced
	w    shardWriter     // owned by Run's goroutine
	// onStatus, when set, learns after each attempt whether the newest
	// state is on disk, and why not; it is called from Run's goroutine.
	onStatus func(saved bool, err error)
}

// NewPersister writes into dir; Run starts it. onStatus may be nil.
func NewPersister(dir string, clk clock.WithTicker, log *slog.Logger, onStatus func(saved bool, err error)) *Persister {
	return &Persister{log: log, clk: clk, next: make(chan diff.State, 1), w: shardWriter{dir: dir}, onStatus: onStatus}
}

// Save hands s over to be written, replacing a state still waiting. It
// never blocks. Only one goroutine (the loop) may call it; s must not be
// changed afterwards (as diff.Compute's results and State.Share's are not).
func (p *Persister) Save(s diff.State) {
	select {
	case <-p.next:
	default:
	}
	p.next <- s
}

// Run writes states as they are handed over, and retries one that failed,
// until ctx ends; then it writes the last state not yet saved once more, so
// a clean shutdown leaves the newest state on disk if the disk takes it.
func (p *Persister) Run(ctx context.Context) error {
	var (
		pending *diff.State // handed over, not yet saved
		retry   clock.Timer
		delays  = p.delays()
		failing error
	)
	stopRetry := func() {
		if retry != nil {
			retry.Stop()
			retry = nil
		}
	}
	defer stopRetry()
	attempt := func() {
		stopRetry()
		err := p.w.write(*pending)
		switch {
		case err == nil:
			pending, delays = nil, p.delays()
			if failing != nil {
				p.log.Info("published state saved again")
			}
		case failing == nil || failing.Error() != err.Error():
			p.log.Warn("cannot save published state; retrying", "err", err)
		}
		failing = err
		if p.onStatus != nil {
			p.onStatus(err == nil, err)
		}
		if err != nil {
			retry = p.clk.NewTimer(delays.Step())
		}
	}
	for {
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C()
		}
		select {
		case s := <-p.next:
			pending = &s
			attempt()
		case <-retryC:
			retry = nil
			attempt()
		case <-ctx.Done():
			select {
			case s := <-p.next:
				pending = &s
			default:
			}
			if pending != nil {
				attempt()
				stopRetry()
			}
			return nil
		}
	}
}

func (p *Persister) delays() *wait.Backoff {
	return &wait.Backoff{Duration: retryInitial, Factor: 2, Cap: RetryMax, Steps: math.MaxInt32}
}
