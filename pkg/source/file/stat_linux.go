package file

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// statPath stats path following symlinks, as the kubelet's os.Stat does,
// into a value that is cheap to compare and allocates nothing but the path.
func statPath(path string) (ident, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return ident{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return ident{
		dev:   st.Dev,
		ino:   st.Ino,
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
		mode:  typeMode(st.Mode),
	}, nil
}

func typeMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	default:
		return fs.ModeIrregular
	}
}
