//go:build linux

package file

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/manifestfs"
)

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
		var nr *manifestfs.NotRegularError
		if !errors.As(r.err, &nr) {
			t.Fatalf("readManifest(FIFO) = %v, want NotRegularError", r.err)
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
