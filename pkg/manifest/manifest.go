package manifest

import (
	"encoding/json"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaxSize is the kubelet's limit: a manifest of MaxSize bytes or more is invalid.
const MaxSize = 10 << 20

// ErrTooLarge is wrapped by the error for a manifest of MaxSize bytes or more.
var ErrTooLarge = errors.New("manifest: file is 10 MiB or larger")

// Options says how to default a manifest.
type Options struct {
	// NodeName is appended to the pod name and set as spec.nodeName.
	NodeName string

	// treeMax overrides the size above which no positional tree is built;
	// tests lower it to compare verdicts with and without the tree.
	treeMax int
}

// Pod is a valid manifest, decoded and defaulted. It keeps the pod in its
// canonical JSON encoding rather than as a *v1.Pod: a node may hold
// thousands of manifests, and the full object (about 3 KiB each, three times
// its encoding) is needed only to explain an UPDATE.
type Pod struct {
	// Key is "<namespace>/<name>" after defaulting.
	Key string
	// Hash identifies the decoded pod; files that differ only in formatting,
	// comments or key order have the same Hash.
	Hash string
	// UID is metadata.uid as the manifest sets it, empty when unset (the
	// kubelet then derives one from the content and the file path).
	UID types.UID
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
		return nil, fmt.Errorf("manifest: decode %s: %w", p.Key, err)
	}
	return &pod, nil
}

// Ignored is one piece of content the kubelet silently ignores.
type Ignored struct {
	Line int    // 1-based, 0 when unknown
	What string // e.g. `unknown field "spec.containers[0].imagePullPolicyy"`
}

// Error is why the kubelet would reject a manifest.
type Error struct {
	Line int    // 1-based, 0 when unknown
	Msg  string // never echoes secret-bearing values
	Err  error  // an underlying cause such as ErrTooLarge, or nil
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }
