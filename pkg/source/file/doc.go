// Package file is podwatch's view of the kubelet's static-pod file source: it
// lists and watches --path (a directory of manifests, or one manifest file),
// decodes each file with pkg/manifest and sends full, immutable Snapshots.
//
// It follows the kubelet (pkg/kubelet/config/file.go, file_linux.go) where the
// kubelet's behaviour decides what runs, and departs from it where podwatch
// needs more than the kubelet does:
//
//   - Like the kubelet, names starting with "." are never manifests, entries
//     are os.Stat'ed (symlinks followed) before they are opened, directories are
//     not entered, and files of manifest.MaxSize bytes or more are invalid.
//   - A dangling symlink or a symlink loop fails the kubelet's stat, so the
//     kubelet skips it without running anything. Such an entry appears as a File
//     with NotRegular set and Mode fs.ModeSymlink, logged at debug level only: it
//     is not a manifest, and not podwatch's own read failure either.
//   - Unlike the kubelet, a file podwatch cannot read (EACCES, EIO) is reported
//     as File.ReadErr: the kubelet, running as root, may well read it.
//   - The watch covers --path and its parent directory, so a directory that is
//     deleted and recreated, or a symlinked --path swapped by rename, is watched
//     again at once (or, if the path is missing, within a second). A change to
//     a dot name (a "..data" symlink swapped by an atomic writer) relists. As
//     with the kubelet, a change behind a symlinked entry whose target lies
//     outside the directory is only seen by the next relist.
//   - A single-file --path is watched itself and through its parent filtered to
//     its name, so an editor that saves by rename is followed.
//   - On Linux the watch reads inotify directly (golang.org/x/sys/unix) rather
//     than through fsnotify, because fsnotify neither exposes IN_CLOSE_WRITE nor
//     tells IN_MOVED_TO from IN_CREATE; those two events are what makes a file
//     Complete without waiting for SettleDelay. Elsewhere fsnotify is used and
//     files only become complete by settling.
//   - A file whose bytes were last written SettleDelay before podwatch reads
//     it is quiet, and complete at once (the files found at start), unless
//     the watch saw it written and not closed: a writer pausing between two
//     chunks is not done however late podwatch reads it.
//
// Unchanged files (same device, inode, size, mtime, ctime) are not re-read;
// files whose bytes hash as before are not decoded again. ListStarted says
// when the last list began, from any goroutine: right after a burst of
// writes a list reads every file, as the kubelet's relist does, and the
// relist detector must not take it for one.
package file
