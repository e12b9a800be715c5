//go:build !linux

package metrics

// processFamilies: the process_* metrics are read from Linux's /proc;
// elsewhere there are none.
func processFamilies() []family { return nil }
