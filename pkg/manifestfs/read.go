package manifestfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	utilio "k8s.io/utils/io"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// NotRegularError is returned when the opened file turns out not to be a
// regular file: it was swapped for a FIFO or the like after it was stat'ed.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%v)", e.Mode)
}

// ErrTooLarge builds the verdict on a file of manifest.MaxSize bytes or
// more, the same *manifest.Error the decoder gives; a new value each call,
// so no caller can change another's.
func ErrTooLarge() error {
	return &manifest.Error{Msg: manifest.ErrTooLarge.Error(), Err: manifest.ErrTooLarge}
}

// OpenFunc is os.OpenFile's shape; tests inject failures through it.
type OpenFunc func(name string, flag int, perm os.FileMode) (*os.File, error)

// Reader reads through Open; the zero value uses os.OpenFile.
type Reader struct {
	Open OpenFunc
}

func (r Reader) open(name string, flag int) (*os.File, error) {
	if r.Open == nil {
		return os.OpenFile(name, flag, 0)
	}
	return r.Open(name, flag, 0)
}

// ReadManifest reads the manifest at path with the zero Reader.
func ReadManifest(path string) ([]byte, error) { return Reader{}.Manifest(path) }

// ReadDirNames lists dir with the zero Reader.
func ReadDirNames(dir string) ([]string, error) { return Reader{}.DirNames(dir) }

// Manifest reads the file at path. A file of manifest.MaxSize bytes or more,
// or one that grew to that size since it was stat'ed, is an error wrapping
// manifest.ErrTooLarge, as the kubelet's own read says.
func (r Reader) Manifest(path string) ([]byte, error) {
	f, err := r.open(path, os.O_RDONLY|openFlags)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Mode: fi.Mode().Type()}
	}
	if fi.Size() >= manifest.MaxSize {
		return nil, ErrTooLarge()
	}
	return readLimited(f)
}

// readLimited reads r to EOF, but never manifest.MaxSize bytes or more.
func readLimited(r io.Reader) ([]byte, error) {
	data, err := utilio.ReadAtMost(r, manifest.MaxSize)
	if errors.Is(err, utilio.ErrLimitReached) {
		return nil, ErrTooLarge()
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// DirNames lists a manifest directory: opened without blocking if a FIFO
// took its place, names sorted byte-wise, the order in which the kubelet's
// relist lets the last of two files defining one pod win.
func (r Reader) DirNames(dir string) ([]string, error) {
	f, err := r.open(dir, os.O_RDONLY|dirOpenFlags)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}
