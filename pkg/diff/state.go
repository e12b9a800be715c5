package diff

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// State is what has been published, plus what waits to settle. It is
// JSON-serialisable so it survives a restart of the agent.
type State struct {
	// Pods are the published static pods by "<namespace>/<name>".
	// Values are shared between States and never changed in place:
	// pointers keep the copy each change makes of this map small.
	Pods map[string]*PodState `json:"pods,omitempty"`
	// Pending holds, per problem or change ID, when it was first seen, so
	// that a transient state (an editor's save) is never reported.
	Pending map[string]time.Time `json:"pending,omitempty"`
	// Reported holds, per problem ID, the message last reported; a settled
	// change reports a problem once, each relist reports it again.
	Reported map[string]string `json:"reported,omitempty"`
	// Salt keys the digests that stand for secret values in the pods'
	// JSON on disk (see Scrubbed). main sets it once per state dir from a
	// random source; without one, UPDATEs still compare digests, unkeyed.
	Salt []byte `json:"salt,omitempty"`
	// Inventory says nothing was ever published (no state on disk): the
	// next step takes an inventory, each pod it finds a ReasonFound
	// rather than an ADD, since the kubelet may have run them for long.
	// The loader sets it; every step clears it, so a file written just
	// before the start, which waits to settle, is an ADD once it does: a
	// write at the start, which the kubelet acts on. Not persisted.
	Inventory bool `json:"-"`
	// ClaimSeq is the ID of the last claim said (types.Claim.ID), so that
	// the numbers go on from it after a restart.
	ClaimSeq uint64 `json:"claimSeq,omitempty"`

	// base is set when the step that made this State left it plain for the
	// snapshot it saw (see incremental.go), so that the next snapshot may be
	// diffed by what it changed alone. Not persisted: a restored State is
	// diffed in full once.
	base *baseline
	// owned says no one else holds the maps: Advance may change them in
	// place.
	owned bool
	// port is the port engine's model and window (see portState).
	port *portState
}

// Waiting reports whether a change of the pod key ("<namespace>/<name>")
// waits to settle.
func (s *State) Waiting(key string) bool {
	_, ok := s.Pending["pod/"+key]
	return ok
}

// PodState is one published pod.
type PodState struct {
	File string `json:"file"` // base name of the file the kubelet takes it from
	Hash string `json:"hash"`
	// Config is the pod's types.Pod.Config; empty in a state written
	// before podwatch kept it, and then Hash alone decides, once.
	Config string     `json:"config,omitempty"`
	UID    ktypes.UID `json:"uid,omitempty"` // metadata.uid as the manifest set it
	// JSON is the pod's canonical encoding (types.Pod.JSON), decoded
	// only to explain an UPDATE.
	JSON json.RawMessage `json:"pod"`
	// Spelt is the pod's types.Pod.Spelt: quantities as the file spelt
	// them, for UPDATE messages.
	Spelt map[string]string `json:"spelt,omitempty"`
}

func (p PodState) object() (*v1.Pod, error) {
	var pod v1.Pod
	if err := json.Unmarshal(p.JSON, &pod); err != nil {
		return nil, fmt.Errorf("diff: decode published pod from %s: %w", p.File, err)
	}
	return &pod, nil
}

// withMaps is s itself, with a map wherever it had none, for a step that
// changes it in place.
func (s State) withMaps() State {
	if s.Pods == nil {
		s.Pods = map[string]*PodState{}
	}
	if s.Pending == nil {
		s.Pending = map[string]time.Time{}
	}
	if s.Reported == nil {
		s.Reported = map[string]string{}
	}
	return s
}

// cloneSharingPods copies s but for Pods, which Compute copies on its first
// write (computation.ownPods).
func (s State) cloneSharingPods() State {
	n := State{Pods: s.Pods, Pending: maps.Clone(s.Pending), Reported: maps.Clone(s.Reported), Salt: s.Salt, Inventory: s.Inventory, ClaimSeq: s.ClaimSeq, base: s.base, port: s.port}
	if n.Pending == nil {
		n.Pending = map[string]time.Time{}
	}
	if n.Reported == nil {
		n.Reported = map[string]string{}
	}
	return n
}
