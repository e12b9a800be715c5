package manifest

import (
	"errors"
	"fmt"
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
