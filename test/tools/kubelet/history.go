package kubelet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Pod is a pod as the runtime sees it: the kubelet puts the pod's namespace,
// name and UID in every sandbox's metadata.
type Pod struct {
	Namespace, Name, UID string
}

// FullName is namespace/name, as the kubelet's log lines name pods.
func (p Pod) FullName() string { return p.Namespace + "/" + p.Name }

// ActionOp is what the kubelet asked the runtime to do with a sandbox.
type ActionOp string

// The sandbox calls recorded.
const (
	ActionStart  ActionOp = "start"  // RunPodSandbox
	ActionStop   ActionOp = "stop"   // StopPodSandbox
	ActionRemove ActionOp = "remove" // RemovePodSandbox
)

// Action is one sandbox call the kubelet made, in the order it made them.
type Action struct {
	At      time.Time
	Op      ActionOp
	Pod     Pod
	Sandbox string
}

// SyncLoop is one "SyncLoop ADD|UPDATE|REMOVE|DELETE" log line: the
// kubelet's config reaching its sync loop. The lines name pods by
// namespace/name only, without the UID.
type SyncLoop struct {
	At     time.Time // by the kubelet's log
	Op     string
	Source string
	Pods   []string
}

// History is what the kubelet has done so far. It is safe for concurrent use.
type History struct {
	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every record
	actions   []Action
	loops     []SyncLoop
	relists   []Relist
	reads     []Read
	added     []Added
	merges    []time.Time
	handled   []Handled
	sandboxes map[string]Pod
}

func newHistory() *History {
	return &History{changed: make(chan struct{}), sandboxes: map[string]Pod{}}
}

// Snapshot is a copy of a History at one moment.
type Snapshot struct {
	Actions []Action
	Loops   []SyncLoop
	// Relists are the kubelet's full lists of the folder (see
	// Kubelet.RelistClock).
	Relists []Relist
	// Reads are the manifest files the kubelet's file source read, in
	// the order it read them.
	Reads []Read
	// Added are the pods the kubelet's pod config took in as new from the
	// file source, in order: one for each SyncLoop ADD line naming the
	// pod, dated when the file source's update was merged.
	Added []Added
	// Merges are when the kubelet's pod config merged each update of the
	// file source, in order: a relist's or a watch event's, sent once
	// the sync loop's channel took the one before.
	Merges []time.Time
	// Handled are the UIDs of the pods of the file source's SyncLoop ADD
	// and REMOVE lines, in the order the pod workers logged them.
	Handled []Handled
}

// Snapshot is what has been recorded. Its lists but Relists share the
// History's arrays, which it only appends to, and are to be read only: a
// waiter takes a snapshot on every record, and copying them each time
// would cost more than the kubelet's own work with a few hundred pods.
// Relists are copied: the last one's end is filled in later.
func (h *History) Snapshot() Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Snapshot{Actions: slices.Clip(h.actions), Loops: slices.Clip(h.loops), Relists: slices.Clone(h.relists), Reads: slices.Clip(h.reads), Added: slices.Clip(h.added), Merges: slices.Clip(h.merges), Handled: slices.Clip(h.handled)}
}

// Wait returns once cond holds for what has been recorded, re-checking it
// after every new record, or ctx's error with the last snapshot.
func (h *History) Wait(ctx context.Context, cond func(Snapshot) bool) (Snapshot, error) {
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		s := h.Snapshot()
		if cond(s) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, fmt.Errorf("waiting for the kubelet: %w", ctx.Err())
		}
	}
}

// notify wakes the waiters; h.mu is held.
func (h *History) notify() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// record runs add, which appends to the History, under its lock, and
// wakes the waiters.
func (h *History) record(add func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	add()
	h.notify()
}

func (h *History) addSandbox(at time.Time, id string, p Pod) {
	h.record(func() {
		h.sandboxes[id] = p
		h.actions = append(h.actions, Action{At: at, Op: ActionStart, Pod: p, Sandbox: id})
	})
}

func (h *History) sandboxAction(at time.Time, op ActionOp, id string) {
	h.record(func() { h.actions = append(h.actions, Action{At: at, Op: op, Pod: h.sandboxes[id], Sandbox: id}) })
}

// addLoop records l and returns its index in the loops.
func (h *History) addLoop(l SyncLoop) (i int) {
	h.record(func() {
		h.loops = append(h.loops, l)
		i = len(h.loops) - 1
	})
	return i
}

// Handled is the UID of one pod of a SyncLoop ADD or REMOVE line, as the
// pod workers logged it when the sync loop handed them that pod to create
// or to kill: the line names the pod without it. A REMOVE and the ADD after
// it that carry one UID bring the same pod back (two restarts); two UIDs
// are a pod replaced, whichever of their sandboxes got to start.
type Handled struct {
	Loop int    // the line's index in Snapshot.Loops
	Pod  string // namespace/name
	UID  string
}

func (h *History) addHandled(d Handled) {
	h.record(func() { h.handled = append(h.handled, d) })
}

// LineUID is the UID the pod workers logged for the pod fullName of the
// SyncLoop line at index loop of Loops; empty when they logged none (a pod
// the kubelet did not admit, or a log without their lines).
func (s Snapshot) LineUID(loop int, fullName string) string {
	for _, d := range s.Handled {
		if d.Loop == loop && d.Pod == fullName {
			return d.UID
		}
	}
	return ""
}

// Relist is one full list of the folder, by the kubelet's own log's clock;
// Ended is zero until it has read the last entry. Missing says it found
// the folder missing: it began and ended at once, and the kubelet dropped
// every pod of the folder.
type Relist struct {
	Began, Ended time.Time
	Missing      bool
}

func (h *History) addMissingRelist(at time.Time) {
	h.record(func() { h.relists = append(h.relists, Relist{Began: at, Ended: at, Missing: true}) })
}

func (h *History) addRelist(at time.Time, end bool) {
	h.record(func() {
		switch n := len(h.relists); {
		case !end:
			h.relists = append(h.relists, Relist{Began: at})
		case n > 0 && h.relists[n-1].Ended.IsZero():
			h.relists[n-1].Ended = at
		}
	})
}

// Read is one manifest file read by the kubelet's file source: during a
// full list of the folder (Relist), or on a watch event. The file source
// does both from one goroutine, in turn, so a watch read of a file written
// after another change means the file source has taken in that change.
type Read struct {
	At     time.Time
	Path   string
	Relist bool
	// Failed: a relist's read that the file source could not make a pod
	// of (its "Could not process manifest file" line), so that the relist
	// left the file's pod out.
	Failed bool
}

func (h *History) addRead(r Read) {
	h.record(func() { h.reads = append(h.reads, r) })
}

// Added is a pod that one update of the file source added to the
// kubelet's pod config (its "Receiving a new pod" line). The update's
// REMOVE and ADD go to the sync loop together, and a busy sync loop logs
// them when it gets to them, seconds apart; the merge dates them as the
// file source sent them.
type Added struct {
	At  time.Time
	Pod string // namespace/name
}

func (h *History) addAdded(a Added) {
	h.record(func() { h.added = append(h.added, a) })
}

func (h *History) addMerge(at time.Time) {
	h.record(func() { h.merges = append(h.merges, at) })
}

// MergeAfter is the first merge of the file source's updates at or after
// t: what the file source read at t reached the pod config then, a file
// source blocked on a busy sync loop seconds later. False when none is
// logged yet.
func (s Snapshot) MergeAfter(t time.Time) (time.Time, bool) {
	i, _ := slices.BinarySearchFunc(s.Merges, t, time.Time.Compare)
	if i == len(s.Merges) {
		return time.Time{}, false
	}
	return s.Merges[i], true
}

// AddedAt lists when the file source's updates added the pod fullName,
// in order: the n-th is the n-th SyncLoop ADD line naming it.
func (s Snapshot) AddedAt(fullName string) []time.Time {
	var out []time.Time
	for _, a := range s.Added {
		if a.Pod == fullName {
			out = append(out, a.At)
		}
	}
	return out
}

// WatchRead reports whether the kubelet has read path on a watch event.
func (s Snapshot) WatchRead(path string) bool {
	return slices.ContainsFunc(s.Reads, func(r Read) bool { return r.Path == path && !r.Relist })
}

// RelistRead reports whether the kubelet has read path during a full list
// of the folder.
func (s Snapshot) RelistRead(path string) bool {
	return slices.ContainsFunc(s.Reads, func(r Read) bool { return r.Path == path && r.Relist })
}

// PodState is where one pod UID stands in a Snapshot.
type PodState struct {
	Pod     Pod
	Started time.Time
	Stopped time.Time // zero while it runs
}

// UIDs lists, for the pod named fullName, each UID the kubelet started a
// sandbox for, in the order it started them, and when it first stopped one
// of that UID's sandboxes. The kubelet stops a sandbox more than once (on
// kill and again on cleanup); the first stop counts.
func (s Snapshot) UIDs(fullName string) []PodState {
	var out []PodState
	idx := map[string]int{}
	for _, r := range s.Runs(fullName) {
		i, seen := idx[r.Pod.UID]
		if !seen {
			idx[r.Pod.UID] = len(out)
			out = append(out, PodState{Pod: r.Pod, Started: r.Started})
			i = len(out) - 1
		}
		out[i].Stopped = r.Stopped // a later sandbox of the UID runs again
	}
	return out
}

// LoopOps lists the SyncLoop operations naming fullName from the file
// source, in order.
func (s Snapshot) LoopOps(fullName string) []string {
	var out []string
	for _, l := range s.Loops {
		if l.Source == "file" && slices.Contains(l.Pods, fullName) {
			out = append(out, l.Op)
		}
	}
	return out
}

// Run is one sandbox of a pod, from its start to its first stop.
type Run struct {
	Pod     Pod
	Sandbox string
	Started time.Time
	Stopped time.Time // zero while it runs
}

// Runs lists the sandboxes the kubelet started for the pod named fullName,
// in start order. Unlike UIDs it keeps a UID that runs, stops and runs
// again as two entries: a shadowed manifest's pod comes back under the UID
// it had.
func (s Snapshot) Runs(fullName string) []Run {
	var out []Run
	idx := map[string]int{}
	for _, a := range s.Actions {
		if a.Pod.FullName() != fullName {
			continue
		}
		i, seen := idx[a.Sandbox]
		switch {
		case a.Op == ActionStart:
			idx[a.Sandbox] = len(out)
			out = append(out, Run{Pod: a.Pod, Sandbox: a.Sandbox, Started: a.At})
		case seen && out[i].Stopped.IsZero():
			out[i].Stopped = a.At
		}
	}
	return out
}

// RelistAfter is the first relist that began after t and has ended, if any.
func (s Snapshot) RelistAfter(t time.Time) (Relist, bool) {
	for _, r := range s.Relists {
		if r.Began.After(t) && !r.Ended.IsZero() {
			return r, true
		}
	}
	return Relist{}, false
}
