package file

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestLimitHintNamesTheSysctl(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "inotify_add_watch", Path: "/m", Err: unix.ENOSPC}, "fs.inotify.max_user_watches"},
		{os.NewSyscallError("inotify_init1", unix.EMFILE), "fs.inotify.max_user_instances"},
		{&fs.PathError{Op: "stat", Path: "/m", Err: unix.ENOENT}, ""},
	} {
		got := limitHint(tc.err)
		if !errors.Is(got, tc.err) {
			t.Errorf("limitHint(%v) = %v: the cause is no longer reachable", tc.err, got)
		}
		if tc.want == "" && got.Error() != tc.err.Error() {
			t.Errorf("limitHint(%v) = %v, want it unchanged", tc.err, got)
		}
		if tc.want != "" && !strings.Contains(got.Error(), tc.want) {
			t.Errorf("limitHint(%v) = %v, want it to name %s", tc.err, got, tc.want)
		}
	}
}
