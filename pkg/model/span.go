package model

import "github.com/podwatch/podwatch/pkg/types"

// Span is what the ends of an exploration say of one pod key: the change
// podwatch's own view makes of it and the restarts the others allow. It is
// the stuff of a claim (types.Claim), which words are rendered from.
type Span struct {
	// From is what the key ran before the inputs, To what it runs at the
	// end of podwatch's own view (Kubelet.Running; "" for none).
	From, To string
	// Before bounds the restarts on the way to To, the change itself not
	// counted, over the ends that run To: a restart is a start of a pod
	// where one ran before. Unbounded when the exploration was capped.
	Before types.Range
	// MaySkip: some end still runs From, having made none of the change.
	MaySkip bool
	// Elsewhere counts the ends that run neither From nor To, which no
	// claim of this change covers.
	Elsewhere int
}

// Span is the span of key over the ends of its part; a key no input
// touches has none, and runs as it did.
func (e *Explored) Span(key string) Span {
	p := e.Part(key)
	if p == nil {
		return Span{Before: types.Bounded(0, 0)}
	}
	return p.span(key)
}

func (e *Part) span(key string) Span {
	runs := func(end End) []string {
		if r, ok := end.Runs[key]; ok {
			return r
		}
		return []string{""}
	}
	main := runs(e.Ends[0])
	s := Span{From: main[0], To: main[len(main)-1]}
	lo, hi := -1, -1
	for _, end := range e.Ends {
		r := runs(end)
		switch last := r[len(r)-1]; {
		case s.From != s.To && last == s.From:
			s.MaySkip = true
		case last == s.To:
			n := starts(r)
			if s.To != "" && s.From != s.To {
				n-- // the change itself
			}
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		default:
			s.Elsewhere++
		}
	}
	switch {
	case e.Capped:
		s.Before = types.Range{Min: 0}
	case lo >= 0:
		s.Before = types.Bounded(lo, hi)
	}
	return s
}

// starts counts the pods started in r after the first.
func starts(r []string) int {
	n := 0
	for _, id := range r[1:] {
		if id != "" {
			n++
		}
	}
	return n
}
