package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// commitFile makes tmp durable and renames it to dst: after a crash at any
// point, dst is either its old content or all of tmp's, never a mix.
// tmp stays open; the caller closes it (or keeps it, as compaction does).
// renamed tells a caller whose error came from the last step that dst is
// already the new file, only the rename's durability is in doubt.
func commitFile(tmp *os.File, dst string) (renamed bool, err error) {
	if err := fdatasync(tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return false, err
	}
	return true, syncDir(filepath.Dir(dst))
}

// setAside renames a corrupt file to <path>.corrupt-<unix seconds> so that
// it stays for an operator to look at but is never read again. A second
// corruption within the same second gets a numbered suffix instead of
// overwriting the first.
func setAside(path string, now time.Time) (string, error) {
	base := path + ".corrupt-" + strconv.FormatInt(now.Unix(), 10)
	dst := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if i == 100 {
			return "", fmt.Errorf("set aside %s: too many corrupt copies named %s*", path, base)
		}
		dst = base + "." + strconv.Itoa(i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return dst, err
	}
	return dst, nil
}

// errNotRegular keeps the store off FIFOs and devices put where its files
// belong: opening or reading one could block forever.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading if it is a regular file.
func openRegular(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	return os.Open(path)
}
