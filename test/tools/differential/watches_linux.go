package differential

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dirWatches counts the inotify watches this process holds on dir, across
// all its inotify instances, from /proc/self/fdinfo. The kubelet's file
// source lists the folder and starts its watch in two goroutines and says
// nothing when the watch is up; until it is, a change is only seen at the
// next relist. Counting the watches is the one way to know.
func dirWatches(dir string) (int, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", dir, err)
	}
	// fdinfo prints the inode in hex and the device in the kernel's
	// internal encoding: major in the bits above 20.
	want := fmt.Sprintf(" ino:%x sdev:%x ", st.Ino, uint64(unix.Major(st.Dev))<<20|uint64(unix.Minor(st.Dev)))
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		// An fd may close between the listing and these reads; it then
		// holds no watch worth counting.
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err != nil || target != "anon_inode:inotify" {
			continue
		}
		f, err := os.Open(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "inotify wd:") && strings.Contains(l, want) {
				n++
			}
		}
		f.Close()
	}
	return n, nil
}
