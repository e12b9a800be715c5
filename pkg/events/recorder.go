package events

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/types"

	"github.com/podwatch/podwatch/pkg/backoff"
)

// sweepBatch bounds the idle cache entries one Record forgets, so a Record
// after a long quiet spell does not stall on thousands of them at once.
const sweepBatch = 64

// Recorder correlates occurrences into Events and feeds its sinks: stream
// sinks inside Record, delivered sinks from Run. Build it with New. Record,
// Stats, Run and Flush are safe for concurrent use.
type Recorder struct {
	opts Options
	clk  clock.WithTicker
	log  *slog.Logger
	seed maphash.Seed

	// recordMu serialises Record, so stream sinks see occurrences in the
	// order their counts were assigned.
	recordMu sync.Mutex
	running  atomic.Bool

	// mu guards everything below, the entries, slots and sink counters; it is
	// never held across a sink's Write.
	mu        sync.Mutex
	events    *ttlCache[eventKey, *entry]
	groups    *ttlCache[groupKey, *group]
	stream    []*streamSink
	delivered []*deliveredSink
	lastNanos int64 // of the newest Event name, to keep names unique
	stats     Stats
	// changeSeq numbers the changes counted (AnnotationChange), continuing
	// from the restored Events.
	changeSeq uint64
	// replays holds, per object, the change last counted for it before the
	// restart, as the restored Events say; an occurrence of that change is
	// a replay. Each entry goes at the object's first change occurrence, or
	// by ForgetReplays.
	replays map[objectKey]string
	// legacy holds the restored Events without a key (see legacy.go) by
	// group and the file they are about, "" where it cannot be told.
	legacy map[groupKey][]unkeyedEvent

	// waiting, when set by tests, is told each time a delivery goroutine is
	// about to block, with the time until its next write (0: nothing queued).
	waiting func(sink string, d time.Duration)
}

type streamSink struct {
	name  string
	sink  Sink
	stats SinkStats
}

type deliveredSink struct {
	idx   int
	name  string
	sink  Sink
	batch BatchSink // sink, when it takes batches; nil otherwise
	// busy serialises writes to the sink between Run and Flush.
	busy    sync.Mutex
	wake    chan struct{} // capacity 1: a queued write for Run to look at
	backoff *backoff.Backoff
	// Guarded by Recorder.mu:
	q           queue
	limiter     *rate.Limiter // the token bucket: Limits.QPS and Limits.Burst
	pendingMax  int
	keyInterval time.Duration
	inflight    int
	stats       SinkStats
	dropLogs    map[string]*dropLog
}

// sinkBackoffID is the backoff entry of the sink as a whole; Event names
// always contain a dot, so it cannot clash with one.
const sinkBackoffID = "sink"

// New builds a Recorder. It starts nothing: Run delivers. opts zero values
// take the defaults; a nil clk is the real clock; a nil log discards.
// restore holds the Events of a previous run (from the local store), so
// their counts and names continue: it is read once here and never written.
func New(opts Options, clk clock.WithTicker, log *slog.Logger, sinks []Registration, restore []v1.Event) (*Recorder, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return newRecorder(opts, clk, log, sinks, restore)
}

func newRecorder(opts Options, clk clock.WithTicker, log *slog.Logger, sinks []Registration, restore []v1.Event) (*Recorder, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{opts: opts, clk: clk, log: log.With("component", "events"), seed: maphash.MakeSeed()}
	now := clk.Now()
	names := map[string]bool{}
	for _, reg := range sinks {
		switch {
		case reg.Name == "":
			return nil, errors.New("events: sink registered without a name")
		case reg.Sink == nil:
			return nil, fmt.Errorf("events: sink %q is nil", reg.Name)
		case names[reg.Name]:
			return nil, fmt.Errorf("events: sink name %q registered twice", reg.Name)
		}
		names[reg.Name] = true
		switch reg.Mode {
		case Stream:
			r.stream = append(r.stream, &streamSink{name: reg.Name, sink: reg.Sink,
				stats: SinkStats{Name: reg.Name, Mode: Stream}})
		case Delivered:
			batch, _ := reg.Sink.(BatchSink)
			keyInterval := orDefault(reg.Limits.KeyInterval, opts.KeyInterval)
			initial, most := retryBounds(opts, keyInterval)
			r.delivered = append(r.delivered, &deliveredSink{
				batch: batch,
				idx:   len(r.delivered), name: reg.Name, sink: reg.Sink,
				wake:        make(chan struct{}, 1),
				backoff:     backoff.New(clk, initial, most).WithJitter(opts.RetryJitter, rand.Float64),
				limiter:     rate.NewLimiter(rate.Limit(orDefault(reg.Limits.QPS, opts.QPS)), orDefault(reg.Limits.Burst, opts.Burst)),
				pendingMax:  orDefault(reg.Limits.PendingMax, opts.PendingMax),
				keyInterval: keyInterval,
				stats:       SinkStats{Name: reg.Name, Mode: Delivered},
				dropLogs:    map[string]*dropLog{},
			})
		default:
			return nil, fmt.Errorf("events: sink %q has unknown mode %d", reg.Name, reg.Mode)
		}
	}
	r.events = newTTLCache[eventKey](opts.CacheSize, opts.TTL, func(_ *entry, expired bool) {
		if expired {
			r.stats.Expired++
		} else {
			r.stats.Evicted++
		}
	})
	r.groups = newTTLCache[groupKey, *group](opts.CacheSize, opts.AggregateInterval, nil)
	r.restore(restore, now)
	return r, nil
}

// Record counts one occurrence: a repeat raises its Event's count, a new
// happening starts an Event, a flood of similar ones collapses into a
// combined Event. Stream sinks get the Event at once; delivered sinks get a
// queued write that Run sends. The error joins the stream sinks' failures
// and is for logging: the occurrence is counted regardless.
func (r *Recorder) Record(ctx context.Context, o Occurrence) error {
	if o.Object.Name == "" || o.Reason == "" {
		return fmt.Errorf("events: occurrence needs an object name and a reason, got %q/%q", o.Object.Name, o.Reason)
	}
	o.Message = capMessage(o.Message)
	r.recordMu.Lock()
	defer r.recordMu.Unlock()

	r.mu.Lock()
	now := r.clk.Now()
	e := r.replayed(&o, now)
	if e == nil {
		e = r.observe(&o, now)
	}
	var woken []*deliveredSink
	for _, s := range r.delivered {
		if r.enqueue(s, e, now) {
			woken = append(woken, s)
		}
	}
	var ev *v1.Event
	if len(r.stream) > 0 {
		ev = e.event(r.opts.Host)
	}
	r.events.sweep(now, sweepBatch)
	r.groups.sweep(now, sweepBatch)
	r.mu.Unlock()

	for _, s := range woken {
		select {
		case s.wake <- struct{}{}:
		default: // Run has a wake-up pending already
		}
	}
	if ev == nil {
		return nil
	}
	var errs []error
	for _, s := range r.stream {
		err := s.sink.Write(ctx, ev, ev.Count > 1)
		held := errors.Is(err, errRepeatHeld)
		if held {
			err = nil
		}
		r.mu.Lock()
		switch {
		case held:
			s.stats.Coalesced++
		case err != nil:
			s.stats.failed(err)
		default:
			s.stats.Written++
		}
		r.mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("events: stream sink %s: %w", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// replayed returns the Event o is a replay on, or nil when o is to be
// counted. A replay is the change last counted for o's object before the
// restart, recomputed: it happens when the process died between storing the
// change's Event and saving the published state that includes it. The
// decision is made from data alone, the Event's AnnotationChange as the
// local store or the API kept it; the Event found is written again at its
// count (so a sink that missed the last write before the crash catches up)
// and stream sinks print it again, without counting it. Only the first
// change occurrence of an object after the restart can be a replay: within
// a run, consecutive changes of one pod never share an ID.
func (r *Recorder) replayed(o *Occurrence, now time.Time) *entry {
	if o.Change == "" || len(r.replays) == 0 {
		return nil
	}
	k := objectKeyOf(o)
	last, had := r.replays[k]
	if !had {
		return nil
	}
	delete(r.replays, k)
	if last != o.Change {
		return nil
	}
	gk := groupKeyOf(o)
	e, found := r.lookup(gk, plainKey(gk, o), o, now)
	if !found {
		e, found = r.events.get(combinedKey(gk), now)
	}
	if !found || e.change != o.Change {
		return nil // its Event is gone: counting it starts a new one
	}
	r.stats.Recorded++
	r.stats.Replayed++
	r.log.Info("a change counted before the restart is seen again: printed, not counted again",
		"object", o.Object.Namespace+"/"+o.Object.Name, "reason", o.Reason, "event", e.name, "count", e.count)
	return e
}

// ForgetReplays ends the chance of a replay for every object keep rejects.
// The agent calls it after its first diff: a pod that the restart found
// unchanged and not waiting to settle had its last change undone, so a
// later change leading to the same place is a real one.
func (r *Recorder) ForgetReplays(keep func(obj v1.ObjectReference) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.replays {
		obj := v1.ObjectReference{Kind: k.kind, Namespace: k.namespace, Name: k.name, UID: ktypes.UID(k.uid), APIVersion: k.apiVersion}
		if !keep(obj) {
			delete(r.replays, k)
		}
	}
}

// observe finds or starts the Event for o at now and counts o on it.
func (r *Recorder) observe(o *Occurrence, now time.Time) *entry {
	r.stats.Recorded++
	gk := groupKeyOf(o)
	key := plainKey(gk, o)
	var g *group
	if r.opts.AggregateMax > 0 {
		var ok bool
		g, ok = r.groups.get(gk, now)
		if !ok {
			g = &group{}
			r.groups.add(gk, g, now)
		}
		g.seen(now)
		if g.admit(maphash.String(r.seed, identity(o)), r.opts.AggregateMax) {
			key = combinedKey(gk)
			r.stats.Combined++
		}
	}
	e, ok := r.lookup(gk, key, o, now)
	if ok {
		e.count++
		e.last = now
		// One key may be worded another way each time (a hedge, a temp
		// file's name, the latest error of an invalid file): the Event
		// says its latest occurrence.
		e.message, e.detail = o.Message, o.Detail
	} else {
		e = r.newEntry(o, now)
		if key.combined {
			e.file = gk.file
		} else {
			e.key = o.Key
		}
		r.events.add(key, e, now)
	}
	if key.combined {
		e.message = combinedMessage(g, o.Reason, o.Message, now)
	}
	if o.Claim != nil {
		e.claim = claimJSON(o.Claim)
	}
	if o.Change != "" {
		r.changeSeq++
		e.change, e.mark = o.Change, changeMark(r.changeSeq, o.Change)
		delete(r.replays, objectKeyOf(o))
	}
	return e
}

// lookup finds the Event cached under key, or for a plain key one of the
// restored Events without a key that o continues.
func (r *Recorder) lookup(gk groupKey, key eventKey, o *Occurrence, now time.Time) (*entry, bool) {
	if e, ok := r.events.get(key, now); ok {
		return e, true
	}
	if key.combined {
		return nil, false
	}
	e := r.continued(gk, key, o, now)
	return e, e != nil
}

func (r *Recorder) newEntry(o *Occurrence, now time.Time) *entry {
	nanos := now.UnixNano()
	if nanos <= r.lastNanos {
		nanos = r.lastNanos + 1
	}
	r.lastNanos = nanos
	e := &entry{
		object:  o.Object,
		typ:     o.Type,
		reason:  o.Reason,
		message: o.Message,
		detail:  o.Detail,
		name:    eventName(o.Object.Name, nanos),
		first:   now,
		last:    now,
		count:   1,
	}
	if fileScoped(o.Reason) {
		e.file = o.File
	}
	e.object.ResourceVersion = ""
	r.attachSlots(e)
	return e
}

func (r *Recorder) attachSlots(e *entry) {
	if len(r.delivered) == 0 {
		return
	}
	e.slots = make([]slot, len(r.delivered))
	for i := range e.slots {
		e.slots[i] = slot{e: e, hidx: -1}
	}
}

// enqueue notes at sink s that e changed at now. It reports whether it
// queued a new write, which Run must be woken for; otherwise the change
// rides along with the write already queued.
func (r *Recorder) enqueue(s *deliveredSink, e *entry, now time.Time) bool {
	sl := &e.slots[s.idx]
	if sl.queued {
		s.stats.Coalesced++
		return false
	}
	if s.q.len() >= s.pendingMax {
		old := s.q.oldest
		s.q.remove(old)
		old.queued = false
		r.logDrop(s, old, "pending-full", &s.stats.Dropped.PendingFull, now, nil)
	}
	sl.queued = true
	sl.queuedAt = now
	sl.readyAt = now
	if !sl.lastAttempt.IsZero() {
		sl.readyAt = types.Later(now, sl.lastAttempt.Add(s.keyInterval))
	}
	s.q.push(sl)
	return true
}

// retryBounds returns the first and the longest retry delay of a delivered
// sink with keyInterval. The longest, with its jitter, stays within the key
// interval: a retry scheduled just before the sink recovers must not hold
// the count back longer than the key interval would, so once the sink
// answers again every count reaches it within keyInterval of its last
// occurrence. During an outage the sink is still tried at most once per
// delay, so the cap costs at most one attempt per key interval.
func retryBounds(opts Options, keyInterval time.Duration) (initial, most time.Duration) {
	most = opts.RetryMax
	if opts.RetryJitter > 0 {
		most = min(most, time.Duration(float64(keyInterval)/(1+opts.RetryJitter)))
	} else {
		most = min(most, keyInterval)
	}
	most = max(most, time.Nanosecond)
	return min(opts.RetryInitial, most), most
}

// orDefault returns v, or def when v is not positive.
func orDefault[T int | float64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
