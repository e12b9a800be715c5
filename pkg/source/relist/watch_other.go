//go:build !linux

package relist

import (
	"time"

	"k8s.io/utils/clock"
)

func newPlatformWatch(string, clock.PassiveClock, time.Duration) (watcher, error) {
	return nil, errUnsupported
}
