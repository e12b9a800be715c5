package model

import (
	"slices"
	"strings"
	"time"
)

// KubeletOp is the kind of a PodUpdate the merge sends to the sync loop.
type KubeletOp string

// The kubelet's PodUpdate ops the merge of a file source sends. A file
// source never sets a deletion timestamp, so DELETE (a graceful delete)
// does not come from it.
const (
	KubeletAdd    KubeletOp = "ADD"
	KubeletUpdate KubeletOp = "UPDATE"
	KubeletRemove KubeletOp = "REMOVE"
)

// PodUpdate mirrors kubetypes.PodUpdate: one op on some pods.
type PodUpdate struct {
	Op   KubeletOp
	Pods []Pod
}

// Storage mirrors podStorage for the file source alone: its pods by UID
// and whether the source was set.
type Storage struct {
	pods map[string]Pod
	seen bool
	// strays says a held pod's key may be none its UID's store entry
	// gives: checkAndUpdatePod keeps the held pod's name, so a manifest
	// that renames its pod and keeps metadata.uid leaves it under the old
	// key. Without strays, the pod held for a key is the one of the UID
	// the store gives that key (Kubelet.held).
	strays bool
}

// NewStorage mirrors newPodStorage: no pods, no source seen.
func NewStorage() *Storage { return &Storage{pods: map[string]Pod{}} }

// Merge mirrors podStorage.Merge in incremental mode: the PodUpdates the
// kubelet sends its sync loop for one update of the source, in its order
// (REMOVE, ADD, UPDATE), each with its pods in key order. The first update
// of the source sends an ADD even when it is empty, so that the kubelet
// knows the source is ready.
func (s *Storage) Merge(u *Update) []PodUpdate { return s.MergeAt(u, time.Time{}) }

// MergeAt is Merge at now, the time recordFirstSeenTime reads from the
// clock: each pod it adds is first seen then (Pod.Seen).
func (s *Storage) MergeAt(u *Update, now time.Time) []PodUpdate {
	seenBefore := s.seen
	adds, updates, removes := s.merge(u, now)
	firstSet := !seenBefore
	var out []PodUpdate
	for _, pu := range []PodUpdate{{KubeletRemove, removes}, {KubeletAdd, adds}, {KubeletUpdate, updates}} {
		if len(pu.Pods) > 0 {
			out = append(out, pu)
		}
	}
	if firstSet && len(adds) == 0 && len(updates) == 0 {
		out = append(out, PodUpdate{Op: KubeletAdd})
	}
	return out
}

// merge mirrors podStorage.merge: each pod of the update whose UID the
// source held keeps the held pod, updated when it differs semantically
// (checkAndUpdatePod, which keeps its first-seen time); a new UID is an
// add, first seen now (recordFirstSeenTime); a UID held and not in the
// update is removed.
func (s *Storage) merge(u *Update, now time.Time) (adds, updates, removes []Pod) {
	s.seen = true // markSourceSet
	old := s.pods
	strays := false
	pods := make(map[string]Pod, len(u.Pods))
	for _, ref := range filterInvalidPods(u.Pods) {
		if existing, found := old[ref.UID]; found {
			updated, needUpdate := checkAndUpdatePod(existing, ref)
			strays = strays || updated.Key != ref.Key
			pods[ref.UID] = updated
			if needUpdate {
				updates = append(updates, updated)
			}
			continue
		}
		ref.Seen = now
		pods[ref.UID] = ref
		adds = append(adds, ref)
	}
	for uid, existing := range old {
		if _, found := pods[uid]; !found {
			removes = append(removes, existing)
		}
	}
	s.pods, s.strays = pods, strays
	for _, l := range [][]Pod{adds, updates, removes} {
		slices.SortFunc(l, func(a, b Pod) int { return strings.Compare(a.Key, b.Key) })
	}
	return adds, updates, removes
}

// filterInvalidPods mirrors filterInvalidPods: of pods with one full name,
// the first is kept and the others dropped.
func filterInvalidPods(pods []Pod) []Pod {
	names := make(map[string]bool, len(pods))
	var filtered []Pod
	for _, p := range pods {
		if names[p.Key] {
			continue
		}
		names[p.Key] = true
		filtered = append(filtered, p)
	}
	return filtered
}

// checkAndUpdatePod mirrors checkAndUpdatePod: the held pod takes the new
// one's content when they differ semantically, which needs an update. A
// status-only difference (a reconcile) has no counterpart in a manifest's
// pod as the port holds it.
func checkAndUpdatePod(existing, ref Pod) (Pod, bool) {
	if existing.Semantic == ref.Semantic {
		return existing, false
	}
	existing.Semantic = ref.Semantic
	return existing, true
}
