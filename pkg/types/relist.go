package types

import "time"

// RelistState says what podwatch knows of when the kubelet next lists the
// manifest folder in full. The zero value is RelistUnknown.
type RelistState uint8

// The states of a RelistPhase.
const (
	// RelistUnknown: no single periodic relist is seen (none yet, two
	// competing ones, the folder cannot be observed, or events were lost).
	RelistUnknown RelistState = iota
	// RelistKnown: full reads of the folder repeat at one period; Next says
	// when the next is due.
	RelistKnown
	// RelistLost: a Known phase stopped (no relist for three periods). It is
	// observed once; a RelistUnknown phase follows at once.
	RelistLost
)

func (s RelistState) String() string {
	switch s {
	case RelistKnown:
		return "known"
	case RelistLost:
		return "lost"
	default:
		return "unknown"
	}
}

// KubeletRelist is one full read of the manifest folder with the kubelet's
// signature: the folder opened, then every regular non-dot file in it,
// in byte order, with no long gap between.
type KubeletRelist struct {
	// At is when the folder was opened.
	At time.Time
	// Seen is when the last file's open was read: when podwatch recognised
	// the relist.
	Seen time.Time
	// Files is how many files it read.
	Files int
	// OnPhase says the relist falls on the Known phase, so that it is the
	// kubelet's as far as podwatch can tell; false for a one-off full read
	// (podwatch's own first list, a backup) and whenever the phase is not
	// Known.
	OnPhase bool
	// RelistRead orders what the relist read against the writes and
	// names that came and went around it.
	RelistRead
	// Uneven: no phase was known, and this read came sooner than the
	// kubelet's period less the tolerance after the full read before it,
	// however soon, neither of them just after a list of podwatch's own.
	// The kubelet's ticker never relists that soon unless its file source
	// was held up and took a held tick late; another periodic reader of
	// every file (a backup tool) looks the same.
	Uneven bool
}

// RelistRead is what the detector's queue says of a relist's read
// against the folder's changes around it, which no clock orders: part of
// KubeletRelist, and handed to the diff with it (Snapshot.KubeletRelistRead).
type RelistRead struct {
	// Written names, in byte order, the files the relist read that were
	// written (or moved in) after the folder open and before the relist
	// was recognised, each placed by the order of the detector's own
	// queue, not by any clock: the kubelet read the file as it was at
	// its open of it, and podwatch may have read it later, or earlier.
	Written []RelistWrite
	// Listed names, in byte order, the regular non-dot files the folder
	// held at the relist's folder open: what its glob could return. A
	// name among them that went since (deleted, moved away) went after
	// the open, so the kubelet, which takes a relist and a watch event in
	// one at a time, takes that going in after the relist. Shared: never
	// modified.
	Listed []string
	// Came names, in byte order, the regular non-dot files that came
	// (were created or moved in) after the relist's folder open and not
	// in Listed, as far as the detector read on: up to the end of the
	// batch it saw the relist complete in. Such a name's going came after
	// the open too, though it was not listed. Shared: never modified.
	Came []string
	// Prior names, in byte order, the files of Listed written (or moved
	// in) just before the relist's folder open, by the detector's queue:
	// the relist read that write's content, or a later one, and podwatch
	// may have read it only after At. Only writes the detector read in
	// the folder open's batch, or in one whose queue was found empty
	// within the window before that batch's, are kept: podwatch read an
	// older one before the relist. Shared: never modified.
	Prior []PriorWrite
}

// RelistWrite is a file written during a relist (KubeletRelist.Written).
type RelistWrite struct {
	Name string
	// Before: a write came after the folder open and before the relist
	// opened the file, so the relist read content newer than its folder
	// open, as of its open of the file.
	Before bool
	// Since, with Before, is when the detector last found its queue empty
	// before the last write before the relist's open: that write came
	// after it, and so did any read of it (zero: not known). Clocks cannot
	// order the write against the relist's opens; this bounds which
	// content the relist read.
	Since time.Time
	// After: a write came after the relist's open of the file (and before
	// it was recognised). Alone, the relist read the content from before
	// it; a write to a file the relist opened, with no read of it queued
	// between, is Before too, as the relist may not have read it
	// yet. But the relist's open of the last file completes it, so a write
	// to that file found after that batch is not placed, though the
	// relist may have been between its open and its read, or the open
	// taken for the relist's the writer's own. With Before, the relist
	// read one of the writes' contents, or a part.
	After bool
}

// PriorWrite is a file written just before a relist's folder open
// (KubeletRelist.Prior).
type PriorWrite struct {
	Name string
	// Since is when the detector last found its queue empty before the
	// last write: the write came after it, and so did podwatch's read of
	// it.
	Since time.Time
}

// RelistPhase is when the kubelet relists, as far as podwatch can tell.
type RelistPhase struct {
	State RelistState
	// Period is the time between two relists (Known, Lost).
	Period time.Duration
	// Last is the folder open of the last relist on the phase (Known, Lost).
	Last time.Time
	// Next is when the next relist is due (Known): the phase's grid point
	// after Last, which is Last + Period, or sooner when Last was seen
	// late (by three tolerances at most). A relist that goes unseen does
	// not move it; NextAfter gives the one after a given time.
	Next time.Time
	// Why says, for logs, why the phase is not Known, or how it was lost.
	Why string
	// HeldUp is the last relist seen late, after a grid point that passed
	// without one, on the phase followed (Known, or Unknown while its
	// relists all come late): the kubelet's file source was held up, by a
	// busy sync loop, and took in watch events late too. Zero when none
	// was seen.
	HeldUp time.Time
}

// NextAfter is the first relist of a Known phase due after t; zero when
// the phase is not Known.
func (p RelistPhase) NextAfter(t time.Time) time.Time {
	if p.State != RelistKnown || p.Period <= 0 {
		return time.Time{}
	}
	if t.Before(p.Last) {
		return p.Last
	}
	n := t.Sub(p.Last)/p.Period + 1
	return p.Last.Add(n * p.Period)
}

// RelistObservation is what the relist detector sends: a change of phase,
// or a recognised relist with the phase as it stands after it.
type RelistObservation struct {
	// Relist is the relist recognised; nil when only the phase changed.
	Relist *KubeletRelist
	// Phase is the phase as of this observation.
	Phase RelistPhase
}
