//go:build !linux

package relist

import "k8s.io/utils/clock"

func newPlatformWatch(string, clock.PassiveClock) (watcher, error) { return nil, errUnsupported }
