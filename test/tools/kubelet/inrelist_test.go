//go:build linux

package kubelet_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// armEarly is how long before the kubelet's next relist is due the
// folder's opens are watched for it: the log line a relist is dated by
// comes a little after its folder open.
const armEarly = 150 * time.Millisecond

// writeInRelist writes content to name in the kubelet's folder as soon as
// the kubelet's next relist opens the folder, so that it lands between the
// relist's glob and its read of the file (unless the kubelet reads the
// file first, on a loaded machine). The relist is due a period after the
// last one the kubelet logged, the period being the time between that
// one and the one before; the first open of the folder from armEarly
// before then is taken for it (podwatch's own list may come first, and
// the write then lands wherever it does). It returns when it wrote.
func writeInRelist(ctx context.Context, k *kubelet.Kubelet, content []byte, name string) (time.Time, error) {
	start := time.Now()
	snap, err := k.History().Wait(ctx, func(s kubelet.Snapshot) bool { _, ok := s.RelistAfter(start); return ok })
	if err != nil {
		return time.Time{}, err
	}
	last, _ := snap.RelistAfter(start)
	var before time.Time
	for _, r := range snap.Relists {
		if r.Began.Before(last.Began) && !r.Missing {
			before = r.Began
		}
	}
	if before.IsZero() {
		return time.Time{}, errors.New("write-in-relist: fewer than two relists to tell the period by")
	}
	due := last.Began.Add(last.Began.Sub(before))
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return time.Time{}, err
	}
	f := os.NewFile(uintptr(fd), "inotify")
	defer f.Close()
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(time.Until(due.Add(-armEarly))):
		// What the scenario does: wait for the relist, not for a side.
	}
	if _, err := unix.InotifyAddWatch(fd, k.Manifests, unix.IN_OPEN|unix.IN_ONLYDIR); err != nil {
		return time.Time{}, err
	}
	if err := f.SetReadDeadline(due.Add(5 * time.Second)); err != nil {
		return time.Time{}, err
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if err != nil {
			return time.Time{}, fmt.Errorf("write-in-relist: no open of the folder: %w", err)
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			mask := binary.NativeEndian.Uint32(b[4:])
			nameLen := int(binary.NativeEndian.Uint32(b[12:]))
			b = b[min(unix.SizeofInotifyEvent+nameLen, len(b)):]
			if mask&unix.IN_OPEN != 0 && nameLen == 0 {
				at := time.Now()
				return at, os.WriteFile(filepath.Join(k.Manifests, name), content, 0o644)
			}
		}
	}
}
