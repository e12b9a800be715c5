//go:build !linux

package differential

import "errors"

// dirWatches needs /proc/self/fdinfo; the kubelet's file source, which this
// package exists to run, watches with inotify only on Linux anyway.
func dirWatches(string) (int, error) {
	return 0, errors.New("differential: needs Linux")
}
