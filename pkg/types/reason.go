package types

// IsProblem reports whether reason names a problem: a condition the diff
// reports again while it lasts (at each relist, or at each new spell of it)
// and whose end no Event of its own says. Every other reason (a change, what
// follows it in the runtime, a transition of the node's state) reports
// something that happened once each time it is reported.
//
// A reader of a journal may be spared a problem's repeats, since none of
// them says anything new; each occurrence of anything else is news, even
// when its words repeat an earlier one (an edit undone and redone).
func IsProblem(reason string) bool {
	switch reason {
	case ReasonDuplicate, ReasonInvalid, ReasonIgnored, ReasonUnreadable, ReasonPathMissing, ReasonWatchDegraded:
		return true
	}
	return false
}
