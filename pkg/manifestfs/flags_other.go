//go:build !linux

package manifestfs

// Off Linux the FIFO race is not guarded: best effort.
const (
	openFlags    = 0
	dirOpenFlags = 0
)
