package types

import (
	"fmt"
	"time"
)

// Op is what the kubelet does with a static pod.
type Op string

// The kubelet's operations on a static pod; a problem has no Op.
const (
	OpAdd    Op = "ADD"
	OpUpdate Op = "UPDATE"
	OpRemove Op = "REMOVE"
)

// Reasons, part of podwatch's output contract.
const (
	ReasonAdded = "StaticPodAdded"
	// ReasonFound: a pod found at a start with no published state, an
	// inventory rather than a change (see Found).
	ReasonFound         = "StaticPodFound"
	ReasonUpdated       = "StaticPodUpdated"
	ReasonRemoved       = "StaticPodRemoved"
	ReasonDuplicate     = "DuplicatePod"
	ReasonInvalid       = "InvalidManifest"
	ReasonIgnored       = "ManifestIgnoredContent"
	ReasonUnreadable    = "ManifestUnreadable"
	ReasonPathMissing   = "ManifestPathMissing"
	ReasonWatchDegraded = "WatchDegraded"
	// ReasonStateNotPersisted: --state-dir cannot be used and podwatch runs
	// in memory, or saving the published state in it keeps failing.
	ReasonStateNotPersisted = "StateNotPersisted"

	// What the container runtime shows after a change (pkg/follow).
	//
	// ReasonStarted: the pod an ADD or UPDATE asked for runs.
	ReasonStarted = "StaticPodStarted"
	// ReasonNotStarted: it does not, past the follow deadline.
	ReasonNotStarted = "StaticPodNotStarted"
	// ReasonStopped: the pod a REMOVE stops is stopped.
	ReasonStopped = "StaticPodStopped"
	// ReasonNotStopped: it still runs, past the follow deadline.
	ReasonNotStopped = "StaticPodNotStopped"
	// ReasonRestarting: a container of a static pod restarted with no
	// manifest change.
	ReasonRestarting = "StaticPodRestarting"
	// ReasonStatePersisted: the published state is saved again after
	// saving it had kept failing.
	ReasonStatePersisted = "StatePersisted"
	// ReasonKubeletRelistLost: the kubelet's periodic relist of the folder,
	// seen until then, stopped.
	ReasonKubeletRelistLost = "KubeletRelistLost"
	// ReasonMayHaveRestarted: the kubelet's file source was seen to run
	// behind only after podwatch had said a change of the pod with a count
	// of its restarts on the way, which no count bounds when it does.
	ReasonMayHaveRestarted = "StaticPodMayHaveRestarted"
)

// Kinds of Object.
const (
	KindPod  = "Pod"
	KindNode = "Node"
)

// Object is what an event is about: a static pod or the node.
type Object struct {
	Kind      string // "Pod" or "Node"
	Namespace string // empty for the node
	Name      string
}

// Change is one thing the kubelet will do, or one problem it will act on.
type Change struct {
	Op      Op     // empty for a problem
	Type    string // v1.EventTypeNormal or v1.EventTypeWarning
	Reason  string
	Message string
	// Detail is what the message leaves out so that it reads at a glance:
	// the full list of fields changed, the races the kubelet may run into,
	// how an estimate was made. Empty when the message says it all.
	Detail string
	Object Object
	// File is the base name of the manifest concerned, empty when none; the
	// event layer keys file-scoped reasons by it.
	File string
	// Hash is the content hash of the pod now published (ADD, UPDATE).
	Hash string
	// Pod is the pod now published (ADD, UPDATE), nil otherwise; shared
	// with the snapshot, read-only.
	Pod *Pod
	// At is when podwatch first saw what made the change (the file's
	// content, for ADD and UPDATE; for an UPDATE that gives the pod another
	// file, the later of that and the watch event or relist that made the
	// kubelet take it: a chmod of a shadowed file changes no content), so
	// that whoever follows it to the runtime can say how long the kubelet
	// took. Zero when unknown (a file that is gone).
	At time.Time
	// Back is set on an UPDATE that the kubelet makes at a relist podwatch
	// did not see (At is then podwatch's own relist, an estimate) when that
	// relist takes back the pod the kubelet ran until a watch event gave
	// the pod another file: the window in which the kubelet made the
	// change. Zero for every other change.
	Back TakeBack
	// MaySkip says the kubelet may not make this change at all: whether it
	// does is a race podwatch cannot see (a part of a file still being
	// written, a relist that may have read a file mid-change or fallen
	// within a short invalid span), which the message says. Whoever follows
	// changes to the runtime reports it done when it sees it done, but
	// never warns that it is not: the kubelet may rightly not make it.
	MaySkip bool
	// Key identifies what happened apart from its wording, for the event
	// layer to count occurrences by (events.Occurrence.Key): for a pod
	// change its transition (the pod's file and its config before and
	// after), for a problem its files and the kind of fault. Words that
	// vary from one occurrence of the same thing to the next (hedges, a
	// temp file's random name, an error's text) never enter it. Empty: the
	// message is the key.
	Key string
	// Found is set on a ReasonFound change: what is seen of the pod found
	// at a start with no published state. Nil on every other change.
	Found *Found
	// ID identifies a pod change (Op set) by what it is: the pod, the Op and
	// the published pod it leads to (file, content hash, restart identity;
	// nothing for a REMOVE). A change recomputed after a restart from the
	// same state on disk and the same files has the same ID, while two
	// consecutive changes of one pod never do: each leads somewhere the
	// other did not. That is what lets a sink's count tell a replay after a
	// crash from a real repeat. Empty for a problem.
	ID string
	// Claim is what the change says of the kubelet as data: set on a pod
	// change (Op set), on an UPDATE the kubelet made that leaves the
	// published pod as it is (a relist's return, seen late), and on a
	// ReasonMayHaveRestarted amendment; nil for a problem.
	Claim *Claim
}

// TakeBack is the window of a Change the kubelet made at a relist podwatch
// did not see, which takes back the pod it ran before a watch event (see
// Change.Back). The kubelet runs one UID per pod at a time and creates a
// new UID's sandbox only once the old pod stopped, so whoever follows the
// change to the runtime can tell the pod taken back by its UID: that of
// the newest sandbox created before Since, when created after Ran.
type TakeBack struct {
	// Since is when podwatch saw the watch event that gave the pod another
	// file: the earliest the kubelet can have made the change. Its relist
	// fell after Since and, when not after At, between the two.
	Since time.Time
	// Ran is when podwatch saw the kubelet begin to run the pod taken back
	// (the watch event, or the relist podwatch saw, that gave it that file
	// and content): no earlier than the kubelet began, so that a sandbox
	// created between Ran and Since can only be that pod's. Zero when
	// podwatch does not know (the kubelet began at a relist podwatch did
	// not see either): a follower that saw that pod start knows better.
	Ran time.Time
}

// IsZero says that b holds no window: the change is an ordinary one.
func (b TakeBack) IsZero() bool { return b.Since.IsZero() }

// FoundCase is what podwatch sees of a pod it found at a start with no
// published state, in a word.
type FoundCase string

// The cases of a found pod, from what the runtime or the mirror pods show.
const (
	// FoundUnknown: nothing to read the running pods from (no container
	// runtime, no API server), or it does not answer.
	FoundUnknown FoundCase = "unknown"
	// FoundRunning: a ready sandbox (or mirror pod) of the pod was created
	// before podwatch started: the kubelet ran it already.
	FoundRunning FoundCase = "running"
	// FoundStarting: no sandbox of the pod ran when podwatch started, or
	// its sandbox was created since: the kubelet starts it (a boot).
	FoundStarting FoundCase = "starting"
	// FoundRestarting: a sandbox created before podwatch started runs
	// another config of the pod: the kubelet restarts it with this one.
	FoundRestarting FoundCase = "restarting"
)

// Found is what a ReasonFound change says of its pod, as data: the words
// of its message follow from it.
type Found struct {
	Case FoundCase
	// Head is what the message says of the file and pod before what is
	// seen of it; whoever words the Event adds its own part after it.
	Head string
	// Since is when the sandbox (or mirror pod) the case rests on was
	// created, zero when none.
	Since time.Time
	// At is when podwatch saw the file at its start: the other end of the
	// durations the words give (an Event is read hours later, when a
	// time relative to its reading says nothing). Zero when unknown.
	At time.Time
	// UID is that sandbox's pod UID, "" when none.
	UID string
	// Through names what was read ("the container runtime", "the mirror
	// pods"), "" when nothing was.
	Through string
	// Detail says more of what is seen (the image that differs, why the
	// runtime did not answer), "" when nothing.
	Detail string
}

// Message is the words of the Event of a found pod: its head and what
// the kubelet does with it or has done, then what that rests on.
func (f Found) Message() string {
	var seen string
	switch {
	case f.Case == FoundRunning && !f.At.IsZero():
		seen = fmt.Sprintf("found running for %s when podwatch started; UID %s, in %s", Span(f.At.Sub(f.Since)), f.UID, f.Through)
	case f.Case == FoundRunning:
		seen = fmt.Sprintf("found running; UID %s, in %s", f.UID, f.Through)
	case f.Case == FoundRestarting:
		seen = fmt.Sprintf("the kubelet restarts the pod with this config; %s runs another (UID %s: %s)", f.Through, f.UID, f.Detail)
	case f.Case == FoundStarting && f.Detail != "":
		seen = fmt.Sprintf("the kubelet starts the pod; %s in %s", f.Detail, f.Through)
	case f.Case == FoundStarting && f.UID != "" && !f.At.IsZero():
		seen = fmt.Sprintf("the kubelet starts the pod; its sandbox (UID %s, in %s) was created %s after podwatch started", f.UID, f.Through, Span(f.Since.Sub(f.At)))
	case f.Case == FoundStarting && f.UID != "":
		seen = fmt.Sprintf("the kubelet starts the pod; its sandbox (UID %s, in %s) was created after podwatch started", f.UID, f.Through)
	case f.Case == FoundStarting:
		seen = fmt.Sprintf("the kubelet starts the pod; nothing of it in %s when podwatch started", f.Through)
	case f.Through != "":
		seen = fmt.Sprintf("podwatch cannot tell whether the kubelet runs the pod; %s does not answer (%s)", f.Through, f.Detail)
	default:
		seen = "podwatch cannot tell whether the kubelet runs the pod; it reads no container runtime and no API server"
	}
	return f.Head + ": " + seen
}

// Span words the time between two events for a message: to the second,
// to the minute past an hour, in days past two of them.
func Span(d time.Duration) string {
	m := d.Round(time.Minute)
	switch {
	case d < 0:
		return "0s"
	case m >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(m/(24*time.Hour)))
	case m >= time.Hour && m%time.Hour == 0:
		return fmt.Sprintf("%dh", int(m/time.Hour))
	case m >= time.Hour:
		return fmt.Sprintf("%dh%dm", int(m/time.Hour), int(m%time.Hour/time.Minute))
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
