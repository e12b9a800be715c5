package file

import (
	"errors"
	"hash/maphash"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/podwatch/podwatch/pkg/manifestfs"

	"github.com/podwatch/podwatch/pkg/types"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// ident is what says a file is unchanged without opening it.
type ident struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
	mode         fs.FileMode // type bits only
}

// kind is the class of a file's state; with the hash of its bytes it says
// whether the content changed, without comparing errors.
type kind uint8

const (
	kindDecoded kind = iota // read and decoded: Pod or Err
	kindTooLarge
	kindNotRegular
	kindReadErr
)

// racyWindow is how recent a file's ctime may be for its identity to be
// untrusted. File times come from a coarse clock (a jiffy; a second or two on
// some filesystems), so a rewrite of the same size right after a stat may keep
// every field of the identity; like git's "racily clean" entries, such files
// are re-read (and hashed, not decoded) until they have been quiet this long.
const racyWindow = 2 * time.Second

// entry is the cached state of one name. It keeps no file bytes: only the
// hash of the last bytes decoded and what they decoded to.
type entry struct {
	// file is replaced, never changed in place: snapshots share it.
	file *types.File
	kind kind
	// id is the identity file was derived from. It is unset after a failure
	// or a race, so the next look reads again.
	id   ident
	idOK bool
	// racy says id was taken too soon after the file last changed to prove
	// the next change would alter it.
	racy bool
	// The last decode, keyed by the hash of its bytes, so a new inode with
	// the same bytes (an atomic rewrite, a restore) is not decoded again.
	sum    uint64
	sumOK  bool
	pod    *types.Pod
	decErr error
}

// written is what the watch last saw done to a name's file (refresh).
type written uint8

const (
	// writtenUnknown: listed, or only chmod-ed or moved away: the file's
	// mtime says whether it is quiet.
	writtenUnknown written = iota
	// writtenOpen: created or written, and not seen closed since: a writer
	// holds it open, however long ago its last write was.
	writtenOpen
	// writtenClosed: closed after writing, or moved into place, and
	// nothing else written since.
	writtenClosed
)

// refresh brings the entry for name up to date and reports whether the name
// still exists; w is what the watch saw last of it.
func (s *Source) refresh(name, path string, now time.Time, w written) bool {
	complete := w == writtenClosed
	e := s.cache[name]
	isNew := e == nil
	if isNew {
		e = &entry{file: &types.File{Name: name, Path: path}}
	}

	id, err := statPath(path)
	if !isNew && err == nil && e.idOK && !e.racy && id == e.id {
		if complete && !e.file.Complete {
			f := *e.file
			f.Complete = true
			e.file = &f
			s.touch(name)
		}
		return true
	}

	next := types.File{Name: name, Path: path}
	var k kind
	// While e.kind is kindDecoded, e.file came from the bytes hashing to
	// e.sum; a different hash is different content.
	prevSum := e.sum
	e.idOK, e.racy = false, false
	switch {
	case err != nil && vanished(err):
		// The kubelet's stat fails too and it skips the name. Only a dangling
		// or looping symlink is still an entry worth showing.
		if fi, lerr := os.Lstat(path); lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
			s.forget(name)
			return false
		}
		k, next.NotRegular, next.Mode = kindNotRegular, true, fs.ModeSymlink
	case err != nil:
		k, next.ReadErr = kindReadErr, err
	case id.mode != 0:
		k, next.NotRegular, next.Mode = kindNotRegular, true, id.mode
		e.id, e.idOK = id, true
	case id.size >= manifest.MaxSize:
		k, next.Err = kindTooLarge, manifestfs.ErrTooLarge()
		e.id, e.idOK = id, true
	default:
		data, rerr := s.readManifest(path)
		var nr *manifestfs.NotRegularError
		switch {
		case rerr == nil:
			sum := maphash.Bytes(s.seed, data)
			if !e.sumOK || e.sum != sum {
				e.pod, e.decErr = s.decode(data, manifest.Options{NodeName: s.opts.NodeName})
				e.sum, e.sumOK = sum, true
			}
			k, next.Pod, next.Err = kindDecoded, e.pod, e.decErr
			e.id, e.idOK = id, true
			e.racy = max(id.ctime, id.mtime) >= s.wallNow().Add(-racyWindow).UnixNano()
		case errors.Is(rerr, manifest.ErrTooLarge):
			k, next.Err = kindTooLarge, rerr
		case errors.As(rerr, &nr):
			k, next.NotRegular, next.Mode = kindNotRegular, true, nr.Mode
		case errors.Is(rerr, fs.ErrNotExist):
			s.forget(name)
			return false
		default:
			k, next.ReadErr = kindReadErr, rerr
		}
	}

	changed := isNew || k != e.kind || next.Mode != e.file.Mode ||
		(k == kindDecoded && e.sum != prevSum)
	if changed {
		// Bytes last written SettleDelay or more before this read are quiet
		// already: the files found at start go out at once. Only mtime tells
		// of writes; ctime also moves with a chmod or a rename. Not so a
		// file the watch saw written and not closed: a writer pausing
		// between two chunks, read late on a loaded machine, has quiet
		// bytes and is not done, and the kubelet may read only the whole.
		if w == writtenUnknown && k == kindDecoded && e.idOK &&
			id.mtime <= s.wallNow().Add(-s.opts.SettleDelay).UnixNano() {
			complete = true
		}
		next.ChangedAt, next.Complete = now, complete
		s.logChange(next, k, e.kind, isNew)
	} else {
		next.ChangedAt, next.Complete = e.file.ChangedAt, e.file.Complete || complete
	}
	e.file, e.kind = &next, k
	s.touch(name)
	if isNew {
		s.cache[name] = e
		s.nameAdded(name, e)
	}
	return true
}

func (s *Source) forget(name string) {
	if _, ok := s.cache[name]; ok {
		delete(s.cache, name)
		s.touch(name)
		s.nameRemoved(name)
		s.log.Debug("manifest file removed", "file", name)
	}
}

// vanished reports a stat failure that means "no such file" to the kubelet:
// gone, dangling (ENOENT, ENOTDIR on the way) or a symlink loop.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}

// logChange logs per change, never per look, so a bad file does not spam.
func (s *Source) logChange(f types.File, k, was kind, isNew bool) {
	switch {
	case k == kindReadErr && (isNew || was != kindReadErr):
		s.log.Warn("cannot read manifest file", "file", f.Name, "err", f.ReadErr)
	case k == kindNotRegular:
		s.log.Debug("not a manifest: not a regular file", "file", f.Name, "mode", f.Mode.String())
	case f.Err != nil:
		s.log.Debug("invalid manifest", "file", f.Name, "err", f.Err)
	default:
		s.log.Debug("manifest changed", "file", f.Name, slog.String("pod", podKey(f.Pod)))
	}
}

func podKey(p *types.Pod) string {
	if p == nil {
		return ""
	}
	return p.Key
}
