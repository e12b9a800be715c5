package relist

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

const (
	// cycles is how many periods in a row full reads must repeat at before
	// their phase is Known: four reads, three intervals (but see quick).
	cycles = 3
	// stopCycles is how many periods without a read stop a train.
	stopCycles = 3
	// maxHistory bounds the reads a new one is paired with, and maxTrains
	// the trains followed at once: a folder read by a tool every second
	// must not make each read cost more.
	maxHistory = 32
	maxTrains  = 64
	// maxPeriod is the longest period looked for; the kubelet's default
	// is 20s.
	maxPeriod = 10 * time.Minute
)

// train is a sequence of full reads on one grid: last + k × period.
type train struct {
	first, last time.Time
	periods     int // periods from first to last, missed reads included
	hits        int // reads on the grid, first and last included
	// run counts the intervals of one period in a row that end at last:
	// a train qualifies once it reaches cycles, and then stays qualified
	// across missed reads while it runs. Reads that each skip grid points
	// never qualify it, so a train at a fraction of the real period
	// cannot take the real one's reads.
	run       int
	qualified bool
	period    time.Duration
	// exact says period is the kubelet's, as podwatch is told it, and is
	// never estimated from the reads: its ticker keeps that grid to the
	// nanosecond, while reads seen late would stretch an estimate, and a
	// grid predicted late puts the kubelet's next relist, on time, off it.
	exact bool
	// prev and prevPeriods are the read before last and periods then, so
	// that a read nearer than last to last's grid point can take its
	// place: another reader's full read just before the kubelet's must not
	// move the grid off the kubelet's.
	prev        time.Time
	prevPeriods int
	// since is when the train's stop is counted from: its last read, or
	// when the folder became observable again after it.
	since time.Time
	// anchor is the grid point last fell on. Podwatch sees a read late
	// (when slow to read its inotify queue), never early: a read later
	// than its grid point moves the grid only by what exceeds half the
	// tolerance, so that one seen late does not put the next, seen on
	// time, off the grid; an earlier read moves it all the way.
	anchor time.Time
	// seenLate is the last read seen later on a grid point of the
	// qualified train than the tolerance allows, by lateTolerance at most:
	// the kubelet's relist read late by a loaded podwatch. It counts as a
	// relist on the phase, but moves neither the grid nor the period.
	seenLate time.Time
	// heldUpAt is the last read taken for the kubelet's relist held up: on
	// the train followed, the first read after a grid point that passed
	// without one. The kubelet lists on a Go ticker, which keeps
	// its grid and holds one tick for a receiver that is busy elsewhere:
	// its file source, blocked sending to a busy sync loop, relists once
	// when it is back, late, and next on the grid again; never early, and
	// never twice between two grid points (but see doubled). Such a read
	// keeps the train
	// from stopping, but is not on the phase and moves nothing: another
	// tool's one-off full read looks just the same.
	heldUpAt time.Time
	// seen is when the folder last became observable again: reads missed
	// before it were not seen, so they count as late from then only.
	seen time.Time
}

// lateTolerance is how late on a qualified train's grid point a read may
// be seen and still be the relist due there: podwatch, slow to read its
// queue on a loaded machine, sees a relist late, never early.
func lateTolerance(tol time.Duration) time.Duration { return 3 * tol }

// lateOn says at is a read seen late on a grid point of the qualified
// train (see seenLate).
func (tr *train) lateOn(at time.Time, tol time.Duration) bool {
	k, off := tr.offset(at)
	return tr.qualified && k >= 1 && off > tol && off <= lateTolerance(tol)
}

// lastRead is the train's last read, seen late or not.
func (tr *train) lastRead() time.Time {
	if tr.seenLate.After(tr.last) {
		return tr.seenLate
	}
	return tr.last
}

// heldUp says at may be the kubelet's relist held up (see heldUpAt): a
// grid point passed since the train's last read with no read on it, and
// none came since that point.
func (tr *train) heldUp(at time.Time, tol time.Duration) bool {
	if !tr.qualified {
		return false
	}
	gp := tr.anchor.Add(at.Sub(tr.anchor) / tr.period * tr.period)
	return !gp.Before(tr.nextAfter()) && at.Sub(gp) > tol && tr.heldUpAt.Before(gp)
}

// doubled says at may be the kubelet's relist right after one held up
// that the train took for the one on its grid: a file source held up
// nearly a period past a tick relists late, just before the next grid
// point or on it, and at once again for that point's tick, which its
// ticker held meanwhile. The first fits the grid; the second, the relist
// due there, comes after it, tens of milliseconds later (within the
// tolerance of the grid point) or more. Only a read on the grid after a
// grid point without one can be such a late relist, and only when that
// grid point came after the last read held up, which took the tick its
// ticker held before it: after one on time, the kubelet reads nothing
// before the next grid point.
func (tr *train) doubled(at time.Time, tol time.Duration) bool {
	if !tr.qualified || tr.periods-tr.prevPeriods < 2 || !at.After(tr.lastRead()) || !tr.heldUpAt.Before(tr.last.Add(-tr.period)) {
		return false
	}
	return at.Before(tr.nextAfter().Add(-tol))
}

// behindAt is when stopCycles periods passed since the train's last read
// on its grid: if reads came since, they all came late.
func (tr *train) behindAt(tol time.Duration) time.Time {
	from := tr.lastRead()
	if tr.seen.After(from) {
		from = tr.seen
	}
	return from.Add(stopCycles*tr.period + tol)
}

// lastAny is the train's last read, held up or not.
func (tr *train) lastAny() time.Time {
	if tr.heldUpAt.After(tr.lastRead()) {
		return tr.heldUpAt
	}
	return tr.lastRead()
}

// nextAfter is the train's first grid point after its last read.
func (tr *train) nextAfter() time.Time {
	n := tr.lastRead().Sub(tr.anchor)/tr.period + 1
	return tr.anchor.Add(n * tr.period)
}

// offset is how far at lies from the train's grid point nearest to it,
// and how many periods after the last read that point is.
func (tr *train) offset(at time.Time) (k int, off time.Duration) {
	d := at.Sub(tr.anchor)
	k = int(math.Round(float64(d) / float64(tr.period)))
	return k, d - time.Duration(k)*tr.period
}

func (tr *train) fits(at time.Time, tol time.Duration) (int, bool) {
	k, off := tr.offset(at)
	return k, k >= 1 && abs(off) <= tol
}

func (tr *train) add(at time.Time, k int, tol time.Duration) {
	pred := tr.anchor.Add(time.Duration(k) * tr.period)
	tr.anchor = at
	if late := at.Sub(pred); late > 0 {
		tr.anchor = at.Add(-min(late, tol/2))
	}
	tr.prev, tr.prevPeriods = tr.last, tr.periods
	tr.last, tr.since = at, at
	tr.periods += k
	tr.hits++
	tr.estimate()
	if k == 1 {
		tr.run++
	} else {
		tr.run = 0
	}
	if tr.run >= cycles {
		tr.qualified = true
	}
}

// replaces says at is nearer than last to the grid point last took, as
// predicted from the read before it.
func (tr *train) replaces(at time.Time, tol time.Duration) bool {
	if tr.hits < 3 {
		return false
	}
	if k, _ := tr.offset(at); k != 0 {
		return false
	}
	pred := tr.prev.Add(time.Duration(tr.periods-tr.prevPeriods) * tr.period)
	return abs(at.Sub(pred)) <= tol && abs(at.Sub(pred)) < abs(tr.last.Sub(pred))
}

func (tr *train) replaceLast(at time.Time) {
	tr.last, tr.since, tr.anchor = at, at, at
	tr.estimate()
}

// estimate takes the period from the reads, unless it is exact.
func (tr *train) estimate() {
	if !tr.exact {
		tr.period = tr.last.Sub(tr.first) / time.Duration(tr.periods)
	}
}

func (tr *train) stopAt(tol time.Duration) time.Time {
	return tr.since.Add(stopCycles*tr.period + tol)
}

// Tracker follows the times of full reads of the folder and says whether
// they repeat at one period, and when the next is due. It is pure: every
// method takes the time it is called at, and it does no I/O. It is not
// safe for concurrent use.
//
// Reads are grouped into trains: two reads a plausible period apart start
// one, and a later read within the tolerance of one of its grid points
// extends it. A train qualifies once cycles intervals in a row were one
// period each; after that a missed read (a skipped grid point) keeps it.
// A train without a read for stopCycles periods stops. The phase is Known
// when exactly one train qualifies, once trains whose period is a multiple
// of another's and whose reads lie on its grid are set aside.
//
// Two readers at one period and half a period apart look like one reader
// at half the period; nothing in the times tells them apart.
type Tracker struct {
	tol       time.Duration
	minPeriod time.Duration
	// expect is the kubelet's period when podwatch is told it (see
	// NewTracker): trains start only at it. 0: any.
	expect time.Duration

	history []time.Time
	trains  []*train
	known   *train // the train a Known phase follows
	phase   types.RelistPhase
	// why is what an Unknown phase says when nothing more pressing
	// applies: none seen yet, or how the last Known phase ended.
	why string

	blind    bool   // the folder cannot be observed
	blindWhy string // why
	held     bool   // events were lost: Unknown until a read on a qualifying train
	// own are the reads of history that may be podwatch's own lists, and
	// watched is when the folder last became observable (see quick).
	own     []time.Time
	watched time.Time

	// ghost is the train of a Known phase that was lost, kept for its
	// grid, which the kubelet's ticker keeps however long it is held up:
	// ghostHits reads on that grid again bring it back, and trains at
	// multiples of its period on its grid are its reads, not another
	// reader's.
	ghost     *train
	ghostHits int
}

// reviveHits is how many reads on a lost phase's grid bring it back: one
// could be another reader's by chance.
const reviveHits = 2

const whyNone = "no periodic full read of the folder seen yet"

// NewTracker returns a Tracker with the given tolerance (0: the default):
// how far a read may lie from its train's grid. Periods shorter than four
// tolerances are not looked for, as every read would fit them. period is
// the kubelet's, when podwatch is told it (Options.KubeletPeriod): trains
// are made at it only; 0: at any.
func NewTracker(tolerance, period time.Duration) *Tracker {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	return &Tracker{tol: tolerance, minPeriod: 4 * tolerance, expect: period, why: whyNone, phase: types.RelistPhase{Why: whyNone}}
}

// Phase is the current phase.
func (t *Tracker) Phase() types.RelistPhase { return t.phase }

// Sweep records a full read whose folder open was at at. It reports whether
// the read falls on the Known phase (after it), and the phases the tracker
// went through, in order, if it changed.
func (t *Tracker) Sweep(at time.Time) (onPhase bool, changes []types.RelistPhase) {
	return t.sweep(at, false)
}

// SweepOwn is Sweep for a full read that may be podwatch's own list (see
// quick).
func (t *Tracker) SweepOwn(at time.Time) (onPhase bool, changes []types.RelistPhase) {
	return t.sweep(at, true)
}

func (t *Tracker) sweep(at time.Time, own bool) (onPhase bool, changes []types.RelistPhase) {
	if t.blind {
		t.unblind(at)
	}
	extended := t.revive(at)
	for _, tr := range t.trains {
		k, ok := tr.fits(at, t.tol)
		switch {
		case ok:
			before := tr.last
			tr.add(at, k, t.tol)
			if k == 1 && !tr.qualified && t.quick(before, at) {
				tr.run, tr.qualified = cycles, true
			}
		case tr.replaces(at, t.tol):
			tr.replaceLast(at)
		case tr.lateOn(at, t.tol):
			tr.seenLate, tr.since = at, at
		case tr == t.known && (tr.heldUp(at, t.tol) || tr.doubled(at, t.tol)):
			// Not extended: a reader at another phase (the kubelet
			// restarted) shows first as such reads, and must make its
			// own train.
			tr.heldUpAt, tr.since = at, at
			continue
		default:
			continue
		}
		if tr.qualified {
			extended = true
			t.held = false
		}
	}
	// A read on a qualified train is that train's; pairing it with every
	// earlier read would only start trains at multiples of its period.
	if !extended {
		t.pair(at)
	}
	t.remember(at, own)
	changes = t.evaluate(at)
	onPhase = t.phase.State == types.RelistKnown && t.known.lastRead().Equal(at)
	return onPhase, changes
}

// revive adds at to the lost phase's train when it falls on its grid, and
// brings the train back once it has reviveHits such reads; it says whether
// it did.
func (t *Tracker) revive(at time.Time) bool {
	g := t.ghost
	if g == nil {
		return false
	}
	k, ok := g.fits(at, t.tol)
	if !ok {
		return false
	}
	g.add(at, k, t.tol)
	if t.ghostHits++; t.ghostHits < reviveHits {
		return false
	}
	g.heldUpAt = time.Time{}
	t.trains = append(t.trains, g)
	t.ghost, t.held = nil, false
	return true
}

// pair starts a train from at and each earlier read a plausible period
// before it, unless one on that grid ends at at already.
func (t *Tracker) pair(at time.Time) {
	for i := len(t.history) - 1; i >= 0; i-- {
		x := t.history[i]
		d := at.Sub(x)
		if d < t.minPeriod {
			continue
		}
		if d > maxPeriod {
			break
		}
		// Two reads k periods apart: the ticks between were missed.
		k := 1
		if e := t.expect; e > 0 {
			if k = int((d + e/2) / e); k < 1 || abs(d-time.Duration(k)*e) > t.tol {
				continue
			}
		}
		period := d / time.Duration(k)
		if t.expect > 0 {
			period = t.expect
		}
		if slices.ContainsFunc(t.trains, func(tr *train) bool {
			return tr.last.Equal(at) && abs(tr.period-period) <= t.tol
		}) {
			continue
		}
		tr := &train{first: x, last: at, periods: k, hits: 2, period: period, exact: t.expect > 0, since: at, anchor: at}
		if p := x.Add(time.Duration(k) * period); tr.exact && p.Before(at) {
			// Reads are seen late, never early: the earlier of the two
			// is the nearer to the grid.
			tr.anchor = p
		}
		if k == 1 && t.quick(x, at) {
			tr.run, tr.qualified = cycles, true
		} else if k == 1 {
			tr.run = 1 // one interval of a period in a row
		}
		t.trains = append(t.trains, tr)
	}
	if n := len(t.trains) - maxTrains; n > 0 {
		// Shed the trains with fewest reads, the oldest first among
		// equals; the one followed stays.
		slices.SortStableFunc(t.trains, func(a, b *train) int {
			switch {
			case a == t.known:
				return -1
			case b == t.known:
				return 1
			case a.hits != b.hits:
				return b.hits - a.hits
			}
			return b.last.Compare(a.last)
		})
		t.trains = t.trains[:maxTrains]
	}
}

// Check stops the trains that had no read for stopCycles periods; call it
// at Deadline.
func (t *Tracker) Check(now time.Time) []types.RelistPhase { return t.evaluate(now) }

// Deadline is when Check must be called next: when the first train stops.
// Zero when there is none, or while the folder cannot be observed.
func (t *Tracker) Deadline() time.Time {
	var d time.Time
	if t.blind {
		return d
	}
	for _, tr := range t.trains {
		if s := tr.stopAt(t.tol); d.IsZero() || s.Before(d) {
			d = s
		}
	}
	if t.phase.State == types.RelistKnown {
		if b := t.known.behindAt(t.tol); b.Before(d) {
			d = b
		}
	}
	return d
}

// Observable says whether the folder can be observed: it cannot while the
// watch is down or it holds no regular file to recognise a read by. While
// it cannot, the phase is Unknown and no train stops; once it can again,
// each train's stop is counted afresh from now.
func (t *Tracker) Observable(now time.Time, ok bool, why string) []types.RelistPhase {
	switch {
	case !ok:
		t.blind, t.blindWhy = true, why
	case t.blind:
		t.unblind(now)
	}
	return t.evaluate(now)
}

func (t *Tracker) unblind(now time.Time) {
	t.blind, t.watched = false, now
	for _, tr := range t.trains {
		tr.since, tr.seen = now, now
	}
}

// Overflow says events were lost: the phase is Unknown until a read falls
// on a qualifying train again.
func (t *Tracker) Overflow(now time.Time) []types.RelistPhase {
	t.held = true
	return t.evaluate(now)
}

// evaluate stops trains, picks the phase and returns the phases passed
// through if it changed.
func (t *Tracker) evaluate(now time.Time) []types.RelistPhase {
	var lost *train
	if !t.blind {
		t.trains = slices.DeleteFunc(t.trains, func(tr *train) bool {
			stopped := !now.Before(tr.stopAt(t.tol))
			if stopped && tr == t.known {
				lost = tr
			}
			return stopped
		})
	}
	if k := t.known; lost == nil && k != nil && t.movedAway(k) {
		// Its reads since all came late while another reader's went on
		// at its period: the kubelet restarted, its ticker on a new grid.
		t.trains = slices.DeleteFunc(t.trains, func(tr *train) bool { return tr == k })
		t.why = t.whyMoved(k)
	}
	var changes []types.RelistPhase
	if lost != nil {
		if t.moved(lost) {
			t.why, t.ghost = t.whyMoved(lost), nil
		} else {
			t.ghost, t.ghostHits = lost, 0
			l := types.RelistPhase{
				State: types.RelistLost, Period: round(lost.period), Last: lost.lastRead(),
				Why: fmt.Sprintf("no full read of the folder for %d periods of %v since %s",
					stopCycles, round(lost.period), lost.lastAny().Format(time.RFC3339Nano)),
			}
			changes = append(changes, l)
			t.why = "the kubelet's relist was lost: " + l.Why
		}
	}
	q := t.qualifying()
	next := types.RelistPhase{Why: t.why}
	t.known = nil
	switch {
	case t.blind:
		next.Why = t.blindWhy
	case t.held:
		next.Why = "inotify events were lost (queue overflow); waiting for the next relist on the phase"
	case len(q) == 1 && !now.Before(q[0].behindAt(t.tol)):
		// Followed still: it stops, and is lost, only once no read at all
		// came for stopCycles periods.
		t.known = q[0]
		next.Why = fmt.Sprintf("the kubelet's relists every %v come late, off their grid, since %s: its file source is held up (a busy sync loop?)",
			round(q[0].period), q[0].lastRead().Format(time.RFC3339Nano))
		next.HeldUp = q[0].heldUpAt
	case len(q) == 1:
		t.known, t.why = q[0], whyNone
		if t.ghost != q[0] {
			t.ghost = nil
		}
		next = types.RelistPhase{State: types.RelistKnown, Period: round(q[0].period), Last: q[0].lastRead(), Next: q[0].nextAfter(), HeldUp: q[0].heldUpAt}
	case len(q) > 1:
		next.Why = fmt.Sprintf("full reads of every file repeat on %d grids of their own (every %v and every %v): something besides the kubelet reads every file",
			len(q), round(q[0].period), round(q[1].period))
	}
	if t.news(next) {
		changes = append(changes, next)
	}
	t.phase = next
	return changes
}

// news says whether next is worth telling after the current phase: a new
// state or reason, or a period moved by more than the tolerance; a Known
// phase's Last and Next move with every read and are not news.
func (t *Tracker) news(next types.RelistPhase) bool {
	cur := t.phase
	if cur.State != next.State || cur.Why != next.Why {
		return true
	}
	return next.State == types.RelistKnown && abs(cur.Period-next.Period) > t.tol
}

func (t *Tracker) whyMoved(tr *train) string {
	return fmt.Sprintf("the full reads every %v moved to another phase (the kubelet restarted?)", round(tr.period))
}

// movedAway says a qualified train with k's period on another grid began
// after k's last read on its own: every read it qualified by came while k
// had none on its grid. A kubelet held up reads late at no period, so
// that is another reader, which took k's place.
func (t *Tracker) movedAway(k *train) bool {
	return slices.ContainsFunc(t.trains, func(tr *train) bool {
		return tr != k && tr.qualified && abs(tr.period-k.period) <= t.tol &&
			tr.first.After(k.lastRead()) && !onGrid(k, tr.last, t.tol)
	})
}

// onGrid says at lies within tol of a grid point of tr.
func onGrid(tr *train, at time.Time, tol time.Duration) bool {
	_, off := tr.offset(at)
	return abs(off) <= tol
}

// moved says a train with the stopped one's period, and three reads,
// runs: the reads go on at another phase, as after a restart.
func (t *Tracker) moved(stopped *train) bool {
	return slices.ContainsFunc(t.trains, func(tr *train) bool {
		return tr.hits >= cycles && abs(tr.period-stopped.period) <= t.tol
	})
}

// qualifying lists the qualified trains, shortest period first, leaving
// out each one whose period is a multiple of a shorter (or equal) one's,
// or the lost phase's, and whose last read lies on that one's grid, and
// each one whose last two reads were another's reader held up.
func (t *Tracker) qualifying() []*train {
	var q []*train
	for _, tr := range t.trains {
		if tr.qualified {
			q = append(q, tr)
		}
	}
	slices.SortStableFunc(q, func(a, b *train) int {
		if c := cmp.Compare(a.period, b.period); c != 0 {
			return c
		}
		return b.hits - a.hits
	})
	// A ticker's reader held up reads late at no period, but by chance
	// such reads may repeat at one: a train whose last two reads were each
	// that of a qualified (or lost) train at another period is its shadow.
	refs := slices.Clone(q)
	if t.ghost != nil {
		refs = append(refs, t.ghost)
	}
	shadow := func(b *train) bool {
		return slices.ContainsFunc(refs, func(a *train) bool {
			return a != b && abs(b.period-a.period) > t.tol && t.heldUpOn(a, b.last) && t.heldUpOn(a, b.prev)
		})
	}
	var out []*train
	for _, b := range q {
		if shadow(b) {
			continue
		}
		harmonic := func(a *train) bool {
			m := (b.period + a.period/2) / a.period
			return m >= 1 && abs(b.period-m*a.period) <= t.tol && onGrid(a, b.last, t.tol)
		}
		// A lost phase's grid goes on too: trains on it are the kubelet's
		// reads, every other one or fewer, not a reader of their own.
		if !slices.ContainsFunc(out, harmonic) && (t.ghost == nil || !harmonic(t.ghost)) {
			out = append(out, b)
		}
	}
	return out
}

// heldUpOn says the read at, in the history, was the first after a grid
// point of k that passed without a read: k's reader held up. False when
// the history does not reach back to that point.
func (t *Tracker) heldUpOn(k *train, at time.Time) bool {
	d := at.Sub(k.anchor)
	n := d / k.period
	if d%k.period < 0 {
		n--
	}
	gp := k.anchor.Add(n * k.period)
	if at.Sub(gp) <= t.tol || len(t.history) == 0 || t.history[0].After(gp.Add(-t.tol)) {
		return false
	}
	return !slices.ContainsFunc(t.history, func(x time.Time) bool {
		return !x.Before(gp.Add(-t.tol)) && x.Before(at)
	})
}

// round keeps a period to the millisecond: finer is noise.
func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
