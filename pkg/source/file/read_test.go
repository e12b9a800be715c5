//go:build linux

package file

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// endless yields zeros forever and counts them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadAtMostStopsAtMaxSize(t *testing.T) {
	for _, hint := range []int64{0, 100, manifest.MaxSize - 1} {
		r := &endless{}
		_, err := readAtMost(r, hint)
		if !errors.Is(err, manifest.ErrTooLarge) {
			t.Fatalf("hint %d: err = %v, want ErrTooLarge", hint, err)
		}
		var merr *manifest.Error
		if !errors.As(err, &merr) {
			t.Errorf("hint %d: %T is not a *manifest.Error", hint, err)
		}
		if r.n > manifest.MaxSize {
			t.Errorf("hint %d: read %d bytes, more than MaxSize %d", hint, r.n, manifest.MaxSize)
		}
	}
}

// The FIFO is the file that replaced a manifest between the stat and the
// open: reading it must fail at once, not wait for a writer.
func TestReadManifestDoesNotBlockOnFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pod.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestSource(t, filepath.Dir(fifo), nil)
	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		_, err := s.readManifest(fifo)
		done <- result{err}
	}()
	select {
	case r := <-done:
		var nr *notRegularError
		if !errors.As(r.err, &nr) {
			t.Fatalf("readManifest(FIFO) = %v, want notRegularError", r.err)
		}
	case <-time.After(waitLimit):
		// Open a writer so the blocked open returns and nothing leaks.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("readManifest blocked on a FIFO")
	}
}
