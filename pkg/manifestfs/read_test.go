//go:build linux

package manifestfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// waitLimit bounds a wait for something that must happen at once.
const waitLimit = 5 * time.Second

// endless yields zeros forever and counts them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// A file that grew past the limit after its stat is read only up to it.
func TestReadLimitedStopsAtMaxSize(t *testing.T) {
	r := &endless{}
	_, err := readLimited(r)
	if !errors.Is(err, manifest.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	var merr *manifest.Error
	if !errors.As(err, &merr) {
		t.Errorf("%T is not a *manifest.Error", err)
	}
	if r.n > manifest.MaxSize {
		t.Errorf("read %d bytes, more than MaxSize %d", r.n, manifest.MaxSize)
	}
}

// The FIFO is the file that replaced a manifest between the stat and the
// open: reading it must fail at once, not wait for a writer.
func TestManifestDoesNotBlockOnFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pod.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadManifest(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		var nr *NotRegularError
		if !errors.As(err, &nr) {
			t.Fatalf("ReadManifest(FIFO) = %v, want NotRegularError", err)
		}
	case <-time.After(waitLimit):
		// Open a writer so the blocked open returns and nothing leaks.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("ReadManifest blocked on a FIFO")
	}
}

func TestDirNamesSorted(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.yaml", "a.yaml", "B.yaml", "a.yaml.bak"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadDirNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"B.yaml", "a.yaml", "a.yaml.bak", "b.yaml"}
	if len(got) != len(want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("names = %q, want %q", got, want)
		}
	}
}

func TestOpenInjected(t *testing.T) {
	boom := errors.New("boom")
	r := Reader{Open: func(string, int, os.FileMode) (*os.File, error) { return nil, boom }}
	if _, err := r.Manifest("x"); !errors.Is(err, boom) {
		t.Errorf("Manifest = %v, want the open's error", err)
	}
	if _, err := r.DirNames("x"); !errors.Is(err, boom) {
		t.Errorf("DirNames = %v, want the open's error", err)
	}
}
