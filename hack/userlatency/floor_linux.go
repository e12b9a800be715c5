//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runFloor is the floor watcher: one inotify watch on dir for IN_MOVED_TO,
// and for each file moved in one read of it and one line on stdout. It
// prints "ready" once the watch is in place and returns only on an error.
func runFloor(dir string) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("inotify_init1: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO); err != nil {
		return fmt.Errorf("inotify_add_watch %s: %w", dir, err)
	}
	if _, err := os.Stdout.WriteString("ready\n"); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read inotify: %w", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, string(name)))
			if err != nil {
				return err
			}
			if _, err := os.Stdout.WriteString(floorLine(string(name), len(data)) + "\n"); err != nil {
				return err
			}
		}
	}
}
