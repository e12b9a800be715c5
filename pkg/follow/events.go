package follow

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/podwatch/podwatch/pkg/backoff"
	"github.com/podwatch/podwatch/pkg/cri"
)

// Events is what a runtime that streams container events offers besides
// Runtime; pkg/cri's Client has it. The follower uses the stream only to
// poll sooner: what it reports still comes from the polls, since a stream
// may drop events, end, or not exist (cri-client's fake ends it at once,
// some runtimes answer Unimplemented).
type Events interface {
	GetContainerEvents(ctx context.Context) (cri.ContainerEventStream, error)
}

// The stream is opened again after it fails or ends: first after
// eventsRetryInitial, doubling up to eventsRetryMax while it keeps ending
// without an event, so a runtime that does not stream costs one call
// every few minutes, and the polls carry on meanwhile.
const (
	eventsRetryInitial = time.Second
	eventsRetryMax     = 5 * time.Minute
	eventsBackoffID    = "container-events"
)

// errStreamEnded: the runtime ended the stream (io.EOF), which a runtime
// that streams never does while it runs.
var errStreamEnded = errors.New("the runtime ended the stream of container events")

// startEvents watches the runtime's container events, when it has them,
// until ctx ends or the returned stop is called; stop returns once the
// watch has.
func (f *Follower) startEvents(ctx context.Context) (stop func()) {
	ev, ok := f.rt.(Events)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.watchEvents(ctx, ev)
	}()
	return func() {
		cancel()
		<-done
	}
}

// watchEvents reads the stream and opens it again, with a backoff, each
// time it fails or ends, until ctx ends.
func (f *Follower) watchEvents(ctx context.Context, ev Events) {
	b := backoff.New(f.clk, eventsRetryInitial, eventsRetryMax)
	streaming := true // as far as known: the first failure is logged
	for {
		n, err := f.readEvents(ctx, ev)
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			b.Reset(eventsBackoffID)
			streaming = true
		}
		wait := b.Next(eventsBackoffID)
		if streaming {
			f.log.Info("the container runtime does not stream container events; polling only until it does", "err", err, "retry", wait)
			streaming = false
		} else {
			f.log.Debug("container events: stream not open", "err", err, "retry", wait)
		}
		t := f.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// readEvents opens the stream and wakes the poll for each event about a
// static pod's container, until the stream fails or ends; n is how many
// events it read.
func (f *Follower) readEvents(ctx context.Context, ev Events) (n int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream's goroutines when Recv fails
	s, err := ev.GetContainerEvents(ctx)
	if err != nil {
		return 0, err
	}
	for {
		e, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return n, errStreamEnded
		}
		if err != nil {
			return n, err
		}
		n++
		if !aboutStaticPod(e) {
			continue
		}
		select {
		case f.poke <- struct{}{}:
		case <-ctx.Done():
			return n, ctx.Err()
		default: // a poll is due already
		}
	}
}

// aboutStaticPod says whether an event may concern a static pod: its
// sandbox carries the kubelet's kubernetes.io/config.source "file", or the
// runtime did not say which sandbox (then a poll finds out).
func aboutStaticPod(e *cri.ContainerEventResponse) bool {
	sb := e.GetPodSandboxStatus()
	return sb == nil || sb.GetAnnotations()[annotationSource] == "file"
}

// pokedPoll is when to poll after an event at now, the last poll having
// been at last and the next being due at next: at once, but not sooner
// than the fast rate after the last poll, so a burst of events (a crash
// loop's) costs no more than a followed change.
func pokedPoll(next, now, last time.Time, poll time.Duration) time.Time {
	at := last.Add(poll)
	if at.Before(now) {
		at = now
	}
	return earliest(next, at)
}
