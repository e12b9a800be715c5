//go:build linux

package kubelet

import (
	goruntime "runtime"
	"testing"
)

// tbRecorder records how Skip ended a test, in place of a testing.T.
type tbRecorder struct {
	testing.TB
	fatal, skipped bool
}

func (r *tbRecorder) Helper() {}

func (r *tbRecorder) Fatalf(string, ...any) { r.fatal = true; goruntime.Goexit() }

func (r *tbRecorder) Skip(...any) { r.skipped = true; goruntime.Goexit() }

// CI sets RequireEnv so that a machine where the kubelet cannot run fails
// the real-kubelet suites instead of passing them skipped.
func TestSkipFailsWhenTheKubeletIsRequired(t *testing.T) {
	for _, tc := range []struct {
		env                 string
		wantFatal, wantSkip bool
	}{
		{env: "", wantSkip: true},
		{env: "0", wantSkip: true},
		{env: "1", wantFatal: true},
	} {
		t.Setenv(RequireEnv, tc.env)
		r := &tbRecorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Skip(r, "no unshare here")
		}()
		<-done
		if r.fatal != tc.wantFatal || r.skipped != tc.wantSkip {
			t.Errorf("%s=%q: Skip failed the test %v and skipped it %v, want %v and %v", RequireEnv, tc.env, r.fatal, r.skipped, tc.wantFatal, tc.wantSkip)
		}
	}
}
