package file

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// notRegularError is returned when the opened file turns out not to be a
// regular file: it was swapped for a FIFO or the like after it was stat'ed.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%v)", e.mode)
}

// errTooLarge is built per use so each carries no shared mutable state; it
// matches manifest's own error for the same verdict.
func errTooLarge() error {
	return &manifest.Error{Msg: manifest.ErrTooLarge.Error(), Err: manifest.ErrTooLarge}
}

// openFunc is os.OpenFile's shape; tests inject failures through it.
type openFunc func(name string, flag int, perm os.FileMode) (*os.File, error)

// ReadManifest reads a manifest the way podwatch does everywhere: without
// blocking on a FIFO, socket or device swapped in after a stat (the type of
// the open descriptor is what counts), and never more than manifest.MaxSize
// bytes (larger is an error wrapping manifest.ErrTooLarge). podwatch check
// reads with it too, so the lint and the agent cannot disagree.
func ReadManifest(path string) ([]byte, error) { return readManifest(os.OpenFile, path) }

func (s *Source) readManifest(path string) ([]byte, error) { return readManifest(s.openFile, path) }

func readManifest(open openFunc, path string) ([]byte, error) {
	f, err := open(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &notRegularError{mode: fi.Mode().Type()}
	}
	if fi.Size() >= manifest.MaxSize {
		return nil, errTooLarge()
	}
	return readAtMost(f, fi.Size())
}

// readAtMost reads r to EOF, but never more than manifest.MaxSize bytes: a
// file that grew to MaxSize since it was stat'ed is too large, as the
// kubelet's ReadAtMost says.
func readAtMost(r io.Reader, sizeHint int64) ([]byte, error) {
	// One byte more than the hint lets the common case see EOF without
	// growing the buffer.
	buf := make([]byte, 0, max(512, min(sizeHint+1, manifest.MaxSize)))
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= manifest.MaxSize {
				return nil, errTooLarge()
			}
			grown := make([]byte, len(buf), min(2*cap(buf), manifest.MaxSize))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
