package types

import (
	"io/fs"
	"time"
)

// Snapshot is a full picture of --path. It is never modified after it is
// sent; its Files and their Pods are shared with later Snapshots and must be
// treated as read-only. Files are pointers so that a snapshot after one
// change copies a pointer per file, not the whole File.
type Snapshot struct {
	Time time.Time
	// Relist is true after a full list: at start, every FileCheckFrequency,
	// after the watch (re)started, and after a watch event that calls for one
	// (a dot name changed, events were lost). It is false after watch events
	// that named the files they touched.
	Relist bool
	// Extra is true for a Relist podwatch makes for itself, on a watch
	// event the kubelet's watch ignores (a dot name that is now a directory
	// or symlink, a chmod of the folder): the kubelet makes no list then,
	// and Events still hold the visible names' events, which it took in.
	Extra bool
	// KubeletRelist is when the kubelet last listed the folder, as podwatch
	// saw it do so; zero when podwatch has not seen it (its own relist then
	// stands in for the kubelet's, and says it is an estimate). The source
	// does not set it: the agent does, from what tells it the kubelet's
	// relists.
	KubeletRelist time.Time
	// KubeletRelistNext is when the kubelet's first relist after
	// KubeletRelist is due on its known phase (RelistPhase.NextAfter); zero
	// while no phase is known. The kubelet's ticker never opens the folder
	// before that; a held-up file source opens it later.
	KubeletRelistNext time.Time
	// KubeletHeldUp is when podwatch last saw the kubelet's relist come
	// late, its file source held up (RelistPhase.HeldUp); set by the agent
	// like KubeletRelist. A file source held up takes in watch events late,
	// one change's events possibly seconds apart with a relist between.
	KubeletHeldUp time.Time
	// KubeletRelistLost is when podwatch lost sight of the kubelet's known
	// relist phase (RelistLost), until it knows it again; set by the agent
	// like KubeletRelist. A file source held up by a busy sync loop reads
	// the folder slowly and late, so that its relists stop showing as one:
	// it may then run behind as after a relist seen late.
	KubeletRelistLost time.Time
	// KubeletUneven is when podwatch last saw two full reads of the
	// folder less than the kubelet's period apart while it knew no phase
	// (KubeletRelist.Uneven); set by the agent like KubeletRelist. Such
	// relists are a held-up file source's, as a late one is on a known
	// phase.
	KubeletUneven time.Time
	// KubeletRelistRead is what the detector's queue said of that
	// relist's read (KubeletRelist.RelistRead), set with KubeletRelist:
	// the files written during it or just before it, what the folder held
	// at its open and what came after. Zero when not known.
	KubeletRelistRead RelistRead
	// Seq numbers the snapshots of one Source, from 1, so that Changed can
	// say what it is relative to; zero when the snapshot is not numbered
	// (built by hand), and then Changed means nothing.
	Seq uint64
	// Changed names (base names, each once, sorted) the files added,
	// removed or replaced since the snapshot numbered Seq-1: every file not
	// named is the same *File as there. It lets a consumer that kept the
	// previous snapshot's result touch only what changed, where comparing
	// every file would make one change cost the size of the folder. nil
	// when unknown, and after every relist (a relist is an occurrence of
	// every file's problems for the kubelet, so it is looked at in full).
	// Non-nil and empty when no file changed.
	Changed []string
	// Events are the watch events on visible names since the snapshot
	// numbered Seq-1, in the order they happened, as the kubelet's own
	// watch takes them in one at a time: it reads the named file on each,
	// so what it runs after a save can differ from what the folder ends
	// as (an editor's backup renamed in, then deleted). Consecutive events
	// of one kind on one name are folded into one, which counts the
	// versions it holds (WatchEvent.Folded). nil when not known
	// (after a relist that is not Extra, or too many to keep), and then
	// Changed is all a consumer has.
	Events []WatchEvent
	// Single is true when Path names a single file (as of the last list that
	// could stat it).
	Single bool
	// Path is the watched path, trailing slashes trimmed.
	Path string
	// PathErr says Path could not be listed: missing (wraps fs.ErrNotExist),
	// not readable (wraps fs.ErrPermission), or neither a directory nor a
	// regular file. When set, Files is what was last known, not listed
	// again: the kubelet sees no manifests at a missing path, but what it
	// sees at a path podwatch cannot read is unknown; pkg/diff decides.
	PathErr error
	// Files is sorted byte-wise by Name (the order in which the kubelet's
	// list lets the first of two files defining one pod win). Names starting
	// with "." never appear.
	Files []*File
	Watch WatchStatus
	// ListDuration and Listed describe the list behind a Relist snapshot,
	// for metrics: how long it took (reading every changed file included)
	// and how many directory entries it read (1 for a single file, 0 when
	// the path could not be listed). Zero when Relist is false.
	ListDuration time.Duration
	Listed       int
}

// WatchEvent is one watch event on a visible name, in the kubelet's terms.
type WatchEvent struct {
	Name string // base name
	// Gone: deleted or moved away, for which the kubelet drops the pod the
	// name last gave. Otherwise the name was created, written, chmod-ed or
	// moved in, for which the kubelet reads the file and takes in its pod
	// if it is valid.
	Gone bool
	// Attrib: the name was only chmod-ed, as far as this event goes; the
	// content is what it was, so its File's ChangedAt dates the content,
	// not the event, which came by the snapshot's Time.
	Attrib bool
	// Folded counts the versions of the file this event stands for beyond
	// one: the kernel's writes or moves in of Name that the source folded
	// into it, each after another (a file written in place in chunks, or
	// written and then replaced by a rename). The kubelet's watch takes the
	// kernel's events in at its own pace and reads the file at each, so it
	// may have read, and run, every one of them; podwatch read only the
	// last. A create does not count: it leaves the file empty. Zero when
	// Gone.
	Folded int
}

// File is one entry of the directory, or the single file.
type File struct {
	Name string // base name
	Path string // Path joined with Name; Snapshot.Path itself when Single
	// Pod is the decoded manifest; nil unless valid.
	Pod *Pod
	// Err is the kubelet's verdict on an invalid file (decode or validation
	// error, or too large: wraps manifest.ErrTooLarge in pkg/manifest).
	Err error
	// ReadErr says podwatch could not stat or read the file (EACCES, EIO):
	// not the kubelet's verdict. Pod and Err are then nil.
	ReadErr error
	// NotRegular marks an entry that is no manifest and was never opened: a
	// directory, FIFO, socket or device, or a dangling or looping symlink.
	NotRegular bool
	// Mode is the file type as os.Stat (following symlinks) sees it;
	// fs.ModeSymlink for a dangling or looping symlink. Permission bits are
	// cleared.
	Mode fs.FileMode
	// ChangedAt is when podwatch first saw the current content (or kind, or
	// read failure) of the file: a change of identity (inode, mtime, ctime)
	// with identical bytes does not move it.
	ChangedAt time.Time
	// Complete is true when, since ChangedAt, the file was seen moved into
	// place or closed after writing (Linux only). Otherwise its content counts
	// once it has been quiet for SettleDelay after ChangedAt.
	Complete bool
}

// MissingPathRetry is how often the watch of a missing manifest path is
// tried again, as the kubelet tries its own: a path created there is
// watched within about this long, without waiting for a relist.
const MissingPathRetry = time.Second

// WatchStatus says whether changes are seen as they happen or only by
// listing every FileCheckFrequency.
type WatchStatus struct {
	Up bool
	// Err is why the watch is down; nil when Up.
	Err error
	// Backoff is the current delay of the watch's restart backoff (1s doubling
	// to 20s; it stays at 0 while the path is merely missing, which is retried
	// every second). It is forgotten 40s after the last failure, as the
	// kubelet's is, so it may be non-zero for a while after the watch is up.
	Backoff time.Duration
	// RetryAt is when the next attempt to start the watch is due; zero when
	// Up.
	RetryAt time.Time
}
