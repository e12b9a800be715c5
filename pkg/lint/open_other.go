//go:build !linux

package lint

// Elsewhere the stat before the open is the only guard: a FIFO swapped in
// between would block. podwatch's checks that matter run on Linux nodes.
const (
	openFlags    = 0
	dirOpenFlags = 0
)
