package types

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// Pod is a valid manifest, decoded and defaulted by pkg/manifest. It keeps
// the pod in its canonical JSON encoding rather than as a *v1.Pod: a node
// may hold thousands of manifests, and the full object is needed only to
// explain an UPDATE.
type Pod struct {
	// Key is "<namespace>/<name>" after defaulting.
	Key string
	// Hash identifies the decoded pod; files that differ only in formatting,
	// comments or key order have the same Hash.
	Hash string
	// Config identifies the pod as the kubelet's config hash does: at one
	// path on one node, two manifests have the same Config exactly when
	// the kubelet gives them the same UID, so a new Config is a restart.
	// It tells apart what Hash does not: an empty list or map written out
	// where none was, a quantity spelt another way, a default written out
	// that the kubelet adds only after hashing (the namespace, the
	// NoExecute toleration). It is not the kubelet's hash itself.
	Config string
	// UID is metadata.uid as the manifest sets it, empty when unset (the
	// kubelet then derives one from the content and the file path).
	UID ktypes.UID
	// Spelt holds the manifest's own text of each resource quantity
	// (requests, limits, overhead, an emptyDir's sizeLimit) that JSON holds
	// in another, canonical form, by field path as UPDATE messages name it
	// ("spec.containers[web].resources.limits[cpu]": "1000m"); nil when
	// all are canonical. Treat as read-only.
	Spelt map[string]string
	// Containers lists the regular containers as "name=image".
	Containers []string
	// JSON is the canonical encoding of the pod, defaulted as the kubelet
	// does: name "<name>-<lower(node)>", namespace "default" when absent,
	// spec.nodeName set. Hash is computed over it. Treat as read-only.
	JSON []byte
	// Ignored lists content the kubelet accepts but silently ignores.
	Ignored []Ignored
}

// Object decodes the pod. Each call returns a new object.
func (p *Pod) Object() (*v1.Pod, error) {
	var pod v1.Pod
	if err := json.Unmarshal(p.JSON, &pod); err != nil {
		return nil, fmt.Errorf("decode pod %s: %w", p.Key, err)
	}
	return &pod, nil
}

// Ignored is one piece of content the kubelet silently ignores.
type Ignored struct {
	Line int    // 1-based, 0 when unknown
	What string // e.g. `unknown field "spec.containers[0].imagePullPolicyy"`
}
