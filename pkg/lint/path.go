package lint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/podwatch/podwatch/pkg/manifestfs"
)

// checkPath checks one path as the kubelet's listConfig would read it.
func (c *checker) checkPath(path string) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		c.add(path, 0, Error, CodeIOError, ioMessage(err))
	case fi.IsDir():
		c.checkDir(path, fi)
	case fi.Mode().IsRegular():
		c.checkFile(path, fi)
	default:
		c.add(path, 0, Error, CodeIOError, fmt.Sprintf("%s: neither a directory nor a regular file", kindOf(fi.Mode())))
	}
}

func (c *checker) checkDir(dir string, fi fs.FileInfo) {
	c.checkPermissions(dir, fi, true)
	names, err := manifestfs.ReadDirNames(dir)
	if err != nil {
		c.add(dir, 0, Error, CodeIOError, ioMessage(err))
		return
	}
	start := len(c.report.Files)
	for _, name := range names {
		// The kubelet globs "[^.]*": dot names are never read, which is why
		// vim's .swp files and atomic writers' temporaries are harmless.
		if strings.HasPrefix(name, ".") {
			continue
		}
		c.checkEntry(filepath.Join(dir, name), name)
	}
	c.checkDuplicates(c.report.Files[start:])
}

func (c *checker) checkEntry(path, name string) {
	fi, err := os.Stat(path)
	if err != nil {
		lfi, lerr := os.Lstat(path)
		switch {
		case errors.Is(lerr, fs.ErrNotExist):
			// Removed since the listing: the kubelet would not see it either.
		case lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ELOOP)):
			c.notRegular(path, "broken symlink: the kubelet cannot stat it and skips it")
		default:
			c.report.Files = append(c.report.Files, File{Path: path, Verdict: Unreadable})
			c.add(path, 0, Error, CodeIOError, ioMessage(err))
		}
		return
	}
	switch {
	case fi.IsDir():
		// Not entered, so a manifest moved into a subdirectory is disabled:
		// a common and deliberate way to stop a static pod, not a mistake.
		c.report.Files = append(c.report.Files, File{Path: path, Verdict: Skipped})
	case fi.Mode().IsRegular():
		c.checkLeftover(path, name)
		c.checkFile(path, fi)
	default:
		c.notRegular(path, kindOf(fi.Mode())+", not a regular file: the kubelet skips it")
	}
}

// notRegular records an entry the kubelet skips although nobody would put it
// there on purpose.
func (c *checker) notRegular(path, msg string) {
	c.report.Files = append(c.report.Files, File{Path: path, Verdict: Skipped})
	c.add(path, 0, Warning, CodeNotRegular, msg)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	default:
		return "irregular file"
	}
}
