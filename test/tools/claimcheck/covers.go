package claimcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/podwatch/podwatch/pkg/types"
)

// Unbounded is Said.Max for a claim whose before.max is null.
const Unbounded = -1

// Said is one pod change podwatch said, in the terms Covers judges by.
type Said struct {
	// Op is ADD, UPDATE or REMOVE.
	Op string
	// Min and Max bound the restarts on the way to the change, the change
	// itself not counted; Max is Unbounded when nothing bounds them. For
	// an ADD they follow the start (the pod started, then restarted on
	// its way to what podwatch says runs); for an UPDATE and a REMOVE
	// they come before the change's own restart or drop.
	Min, Max int
	// MaySkip: the kubelet may make none of it.
	MaySkip bool
	// After is how many times the pod may leave what the change leads to
	// and come back to it (a drop and a start, or two restarts folded in
	// one UPDATE each way) once the change is made.
	After int
	// ID and With: a change whose With is the ID of the change just before
	// it is all-or-nothing with that one.
	ID, With uint64
	// Capped: the claim was capped (Before is then {0, null}); Folded:
	// widened after a forced fold of podwatch's window (Before {0, null},
	// MaySkip where a dropped way does not make the change).
	Capped, Folded bool
}

// FromClaim is c in Covers's terms.
func FromClaim(c types.Claim) Said {
	s := Said{Op: string(c.Op), Min: c.Before.Min, Max: Unbounded, MaySkip: c.MaySkip, After: c.After.Max, ID: c.ID, With: c.With, Capped: c.Capped, Folded: c.Folded}
	if c.Before.Max != nil {
		s.Max = *c.Before.Max
	}
	return s
}

// Amend widens, in said, the changes an amendment names (a
// StaticPodMayHaveRestarted: Claim.Amends) to no bound on the way.
func Amend(said []Said, amends []uint64) {
	for i := range said {
		if slices.Contains(amends, said[i].ID) {
			said[i].Max = Unbounded
		}
	}
}

func (s Said) String() string {
	var b strings.Builder
	b.WriteString(s.Op)
	switch {
	case s.Max == Unbounded:
		fmt.Fprintf(&b, " [%d..]", s.Min)
	case s.Max > 0 || s.Min > 0:
		fmt.Fprintf(&b, " [%d..%d]", s.Min, s.Max)
	}
	if s.MaySkip {
		b.WriteString("?")
	}
	if s.After > 0 {
		fmt.Fprintf(&b, " after<=%d", s.After)
	}
	if s.With != 0 {
		fmt.Fprintf(&b, " with#%d", s.With)
	}
	if s.Capped {
		b.WriteString(" capped")
	}
	if s.Folded {
		b.WriteString(" folded")
	}
	return b.String()
}

// Normal is ops with every REMOVE directly followed by an ADD made one
// UPDATE: one restart either way.
func Normal(ops []string) []string {
	var out []string
	for i := 0; i < len(ops); i++ {
		if ops[i] == "REMOVE" && i+1 < len(ops) && ops[i+1] == "ADD" {
			out = append(out, "UPDATE")
			i++
			continue
		}
		out = append(out, ops[i])
	}
	return out
}

// Covers reports whether the kubelet's operations on one pod, in order,
// are one of the sequences said allows, both in normal form. Each change
// is made (or, MaySkip, not) with its restarts on the way, within
// [Min, Max], and up to After returns after it; a change all-or-nothing
// with the one before it is skipped with it and made with it. Whether the
// pod runs at the start is told by the kubelet's first operation, or, when
// it made none, by podwatch's first change (see CoversFrom).
//
// A change skipped leaves the pod as it was, so that the next one may
// find it otherwise than podwatch said: an UPDATE after an ADD skipped
// starts the pod, an ADD after a REMOVE skipped restarts it (or leaves
// it, the same pod), and a REMOVE after an ADD skipped finds nothing to
// stop.
func Covers(said []Said, ops []string) bool {
	var running bool
	switch {
	case len(ops) > 0:
		running = ops[0] != "ADD"
	case len(said) > 0:
		running = said[0].Op != "ADD"
	}
	return CoversFrom(said, ops, running)
}

// CoversFrom is Covers for a pod the kubelet runs at the start, or not.
func CoversFrom(said []Said, ops []string, running bool) bool {
	m := &matcher{said: said, ops: Normal(ops), memo: map[state]bool{}}
	return m.from(state{running: running})
}

// state is where the match stands: the next change, the next of the
// kubelet's operations, a REMOVE fed but not yet matched (it makes an
// UPDATE with an ADD fed next), whether the next change must be made, and
// whether the pod runs.
type state struct {
	i, pos  int
	pending bool
	forced  bool
	running bool
}

type matcher struct {
	said []Said
	ops  []string
	memo map[state]bool
}

// paired says said[i+1] is all-or-nothing with said[i].
func (m *matcher) paired(i int) bool {
	return i+1 < len(m.said) && m.said[i+1].With != 0 && m.said[i+1].With == m.said[i].ID
}

func (m *matcher) from(st state) bool {
	if v, ok := m.memo[st]; ok {
		return v
	}
	m.memo[st] = false // a state is never its own successor; this guards it
	v := m.step(st)
	m.memo[st] = v
	return v
}

func (m *matcher) step(st state) bool {
	if st.i == len(m.said) {
		pos, ok := m.flush(st.pos, st.pending)
		return ok && pos == len(m.ops)
	}
	s := m.said[st.i]
	if s.MaySkip && !st.forced {
		next := st.i + 1
		if m.paired(st.i) {
			next++
		}
		if m.from(state{i: next, pos: st.pos, pending: st.pending, running: st.running}) {
			return true
		}
	}
	hi := s.Max
	if hi == Unbounded || hi > len(m.ops) {
		// Each restart takes one of the kubelet's operations.
		hi = len(m.ops)
	}
	running := s.Op != "REMOVE"
	for k := s.Min; k <= hi; k++ {
		for a := 0; a <= s.After; a++ {
			for _, ops := range expand(s.Op, st.running, k, a) {
				pos, pending, ok := m.feed(st.pos, st.pending, ops)
				if ok && m.from(state{i: st.i + 1, pos: pos, pending: pending, forced: m.paired(st.i), running: running}) {
					return true
				}
			}
		}
	}
	return false
}

// expand is the operations a change of op may make, from a pod running
// or not, with k restarts on the way and a returns after it, a restart
// written as one UPDATE.
func expand(op string, running bool, k, a int) [][]string {
	var out []string
	switch {
	case op == "ADD" && running:
		// Restarted to the pod said, or left as the same pod.
		return [][]string{appendN(nil, "UPDATE", k+1+a), appendN(nil, "UPDATE", k+a)}
	case (op == "ADD" || op == "UPDATE") && !running:
		out = append(out, "ADD")
		out = appendN(out, "UPDATE", k+a)
	case op == "UPDATE":
		out = appendN(out, "UPDATE", k+1+a)
	case op == "REMOVE" && running:
		out = appendN(out, "UPDATE", k)
		out = append(out, "REMOVE")
		for range a {
			out = append(out, "ADD", "REMOVE")
		}
	case op == "REMOVE":
		if k > 0 {
			out = append(out, "ADD")
			out = appendN(out, "UPDATE", k-1)
			out = append(out, "REMOVE")
		}
		for range a {
			out = append(out, "ADD", "REMOVE")
		}
	default:
		return nil // matches nothing
	}
	return [][]string{out}
}

func appendN(s []string, op string, n int) []string {
	for range n {
		s = append(s, op)
	}
	return s
}

// feed matches ops, as one side makes them, against the kubelet's in
// normal form from pos: a REMOVE waits to see whether an ADD follows.
func (m *matcher) feed(pos int, pending bool, ops []string) (int, bool, bool) {
	for _, op := range ops {
		if pos > len(m.ops) {
			return 0, false, false
		}
		if op == "ADD" && pending {
			if pos >= len(m.ops) || m.ops[pos] != "UPDATE" {
				return 0, false, false
			}
			pos, pending = pos+1, false
			continue
		}
		var ok bool
		if pos, ok = m.flush(pos, pending); !ok {
			return 0, false, false
		}
		pending = false
		if op == "REMOVE" {
			pending = true
			continue
		}
		if pos >= len(m.ops) || m.ops[pos] != op {
			return 0, false, false
		}
		pos++
	}
	return pos, pending, true
}

// flush matches a REMOVE left waiting.
func (m *matcher) flush(pos int, pending bool) (int, bool) {
	if !pending {
		return pos, true
	}
	if pos >= len(m.ops) || m.ops[pos] != "REMOVE" {
		return 0, false
	}
	return pos + 1, true
}

// Miss says, of said and ops that Covers finds apart, which way: "more"
// when the kubelet made more operations, in normal form, than any
// sequence said allows, "fewer" when it made fewer than every one, and
// "other" when the count fits and the order or kind does not.
func Miss(said []Said, ops []string) string {
	n := len(Normal(ops))
	lo, hi := 0, 0
	for _, s := range said {
		if !s.MaySkip {
			lo += 1 + s.Min
		}
		if s.Max == Unbounded || hi == Unbounded {
			hi = Unbounded
			continue
		}
		hi += 1 + s.Max + s.After
	}
	switch {
	case hi != Unbounded && n > hi:
		return "more"
	case n < lo:
		return "fewer"
	}
	return "other"
}
