package model

import (
	"errors"
	"time"
)

// Outcome is what one read of a file by the kubelet may have got: the pod
// it decoded to, or why not (invalid, or fs.ErrNotExist when gone).
type Outcome struct {
	Pod *Pod
	Err error
}

// Input is one thing the kubelet's file source takes in, in the order it
// takes them: a watch event or a relist, with what podwatch cannot see of
// it as choices.
type Input struct {
	// Event is a watch event as produceWatchEvent queued it; nil for a
	// relist.
	Event *WatchEvent
	// Reads are the outcomes the read of an add or modify may have had,
	// podwatch's own view first. A file podwatch never read (gone at
	// once) has several: invalid or partial, gone, or a version along
	// the rename chain.
	Reads []Outcome
	// Relist is a relist of the folder as it may have been listed.
	Relist *Listing
	// Early is, for a relist, how many of the inputs before it it may
	// have come before: events still queued when it began.
	Early int
	// At is when podwatch saw the kubelet take the input in: the
	// snapshot that brought a watch event, the kubelet's relist as the
	// detector saw it. Zero when podwatch does not know: its own list
	// standing in for the kubelet's, a relist dated by estimate. The
	// merge dates the pods it first sees by it (Pod.Seen).
	At time.Time
	// Capped says the input stands for more reads than it explores:
	// versions the source folded past maxFolded, each of which may be
	// a restart more. A part that takes it in is capped.
	Capped bool
	// push stands, in a part, for another part's event that may have
	// changed the store, which then sends all of it: what the part's keys
	// hold in the store, the merge takes again.
	push push
	// seen is, for a watch event, when podwatch read the version it
	// read of it (when it saw a going), and snap the snapshot it came in
	// (Timeline.taken): what places a relist seen late among the events
	// (relistat.go).
	seen time.Time
	snap int
}

// push is whether another part's event sends the store.
type push uint8

const (
	noPush     push = iota
	mayPush         // podwatch's own view: it sends
	mayPushNot      // podwatch's own view: it does not
	surePush
)

// Listing is the folder as a relist may have listed it.
type Listing struct {
	// Missing: the folder did not exist.
	Missing bool
	Files   []Listed
}

// Listed is one name a relist listed, with the outcomes its read may have
// had (for a regular file), podwatch's own view first.
type Listed struct {
	Entry
	Reads []Outcome
}

// errUnlisted is the read of a file no input gives an outcome for.
var errUnlisted = errors.New("no outcome given for this read")
