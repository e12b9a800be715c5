//go:build !linux

package main

import "errors"

func runFloor(string) error { return errors.New("the floor watcher needs Linux's inotify") }
