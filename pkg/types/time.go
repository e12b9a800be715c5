package types

import "time"

// Later is the later of a and b: when something is due after two waits.
func Later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
