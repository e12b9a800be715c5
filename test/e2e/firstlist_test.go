package e2e

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// firstListMsg is the agent's log message once its first list of the
// manifests is taken in. With no published state that list is an
// inventory: a manifest older than the settle delay then is found
// (StaticPodFound), a younger one added later. A test that means an ADD
// writes its manifest after this line, so that how fast the agent came up
// cannot decide which.
const firstListMsg = "first list of the manifests taken in"

// firstListHandler passes records on to next and closes seen at the
// first-list record; handlers derived by WithAttrs and WithGroup share seen.
type firstListHandler struct {
	next slog.Handler
	once *sync.Once
	seen chan struct{}
}

func newFirstListHandler(next slog.Handler) firstListHandler {
	return firstListHandler{next: next, once: &sync.Once{}, seen: make(chan struct{})}
}

// Enabled lets every Info record through, whatever next's level, so that
// the first-list record is seen even where next drops it.
func (h firstListHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h firstListHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == firstListMsg {
		h.once.Do(func() { close(h.seen) })
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h firstListHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.next = h.next.WithAttrs(attrs)
	return h
}

func (h firstListHandler) WithGroup(name string) slog.Handler {
	h.next = h.next.WithGroup(name)
	return h
}

// waitFirstList returns once the agent has taken its first list.
func (a *runningAgent) waitFirstList() {
	a.t.Helper()
	select {
	case <-a.firstList:
	case <-time.After(faultsWait):
		a.t.Fatalf("no first list of the manifests within %v:\n%s", faultsWait, a.dump())
	}
}

// waitFirstList returns once the agent has logged its first list, in
// either log format.
func (p *procAgent) waitFirstList() {
	p.t.Helper()
	waitUntil(p.t, faultsWait, func() bool { return strings.Contains(p.stderr.String(), firstListMsg) },
		func() string { return "no first list of the manifests:\n" + p.dump() })
}
