// Package relist recognises the kubelet's periodic relist of the manifest
// folder by the opens it makes, and tracks its phase, so that podwatch can
// say when the kubelet will next act on a change that only a relist acts
// on (a manifest that turned invalid is dropped only then).
//
// Every fileCheckFrequency the kubelet's file source globs the folder
// (which opens it), sorts the names, and opens and reads every regular
// file whose name does not start with ".", one after the other. Watch
// events are handled by the same goroutine in between, one file each.
// podwatch's own file source lists the folder too, but reads only the
// files whose stat changed. So a relist has a signature no partial reader
// has: the folder opened, then every regular non-dot file in it opened in
// byte order, each open within Options.Window of the one before.
//
// That gap is the reader's, not the Detector's: on a loaded node the
// Detector reads its queue late, and opens that came in a row are read
// far apart. So a gap is measured from the open before to when the queue
// was found empty after it (the watch looks before each read, and once
// more when nothing came for a little over the window after a batch):
// every open read after that came later. Opens read from a backlog are
// never too far apart; a pause of the reader's, seen as a queue empty for
// longer than the window, breaks the read off.
//
// The Detector watches the folder with an inotify instance of its own for
// IN_OPEN (the folder's and its files'). Inotify says nothing of who opened
// a file and merges a repeated event not yet read, so opens are never
// counted to subtract podwatch's own: the signature is matched as a
// subsequence of the opens that follow a folder open, which another
// reader's opens in between cannot break.
//
// The folder is busy: other writers create, rename and delete files while
// the kubelet reads it. The same instance follows names coming and going
// (IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO), so the Detector
// knows what the folder held at each open of it, in the events' own order,
// from one list when the watch starts (through a descriptor it holds open,
// which shows as no open) and another after lost events. A file the
// folder held at the open that went since (deleted, moved away, replaced
// by what is not a regular file) may be left out: the kubelet's stat of
// it fails and it opens nothing. A file created after the folder open is
// not waited for: the kubelet's glob, just after its open, may hold it or
// not. A file moved over a listed name still names a file, which the
// kubelet opens. At least half of the files the folder held must be
// opened, so that a folder emptied while someone looked at it is no relist.
//
// It also watches writes and reads (IN_MODIFY, IN_ACCESS), to place each
// write during a relist against the relist's open and read of that file
// by the queue's own order (types.RelistWrite), which no clock gives.
//
// Not every full read is the kubelet's: podwatch's own first list reads
// every file, and its later lists re-read every file written in the last
// two seconds, so right after a burst of writes its lists read the whole
// folder too. With Options.OwnListPeriod set (the agent sets it), a full
// read in which every file was written within that window and one period
// of podwatch's own may be its own; with a sub-second period such reads
// would otherwise make a phase of their own. Options.OwnLists (the agent
// sets it to its file source) says when podwatch's own lists begin: only
// such a read that opened the folder within OwnListLag after one is set
// aside, so that the kubelet's relists of a folder just written (all of
// it, when podwatch and the kubelet start on a new node) still count.
// Podwatch's first list is recognised, but falls off the phase
// (KubeletRelist.OnPhase is false).
//
// The Tracker, pure, turns the times of recognised relists into a phase:
// Known once relists repeat at one period, within Options.Tolerance, for
// three cycles; told the kubelet's period, at once from two reads one
// period apart when nothing else can have made that interval (see
// Tracker.quick: no other full read between, no sign of another reader or
// a held-up file source just before, neither read podwatch's own list). A relist is dated by when podwatch read its folder open,
// late when podwatch was slow to read, never early: a read later than its
// grid point moves the grid by what exceeds half the tolerance only, so
// that the next relist, seen on time, still falls on it; on a Known phase a
// read seen up to three tolerances late is the relist due there, on the
// phase, and moves nothing. Told the kubelet's period
// (Options.KubeletPeriod, as the agent tells it), a train's period is that
// exactly, never estimated from its reads: the kubelet's ticker keeps its
// grid, and reads seen late would stretch an estimate, put the grid late,
// and the kubelet's next relists, on time, before it and off the phase; of
// a train's first two reads, the earlier to its grid point anchors it.
// It is Unknown before, when two periodic readers compete (a backup tool, a second
// podwatch starting), while the folder cannot be observed (no watch, no
// regular file in it) and after events were lost (IN_Q_OVERFLOW) until a
// relist falls on the phase again. A Known phase
// that stops for three periods is reported Lost once, then Unknown; one
// whose relists go on at another phase (the kubelet restarted) becomes
// Unknown without being Lost.
//
// The kubelet lists on a Go ticker, which keeps its grid and holds one
// tick while the receiver is busy: a file source held up sending to a
// busy sync loop relists once when it is back, late, and then on the grid
// again, never early and never twice between two grid points. So on the
// phase followed, the first read after a grid point that passed without
// one is taken for the kubelet's relist held up: it keeps the phase from
// stopping, but is not on the phase (a one-off full read by another tool
// looks the same, and the kubelet's own may still be to come, so what
// only a relist does is said at the next relist on the grid), and it
// moves nothing. While relists keep coming late, three periods after the
// last on the grid, the phase is Unknown (the kubelet is held up) but
// followed, and Known again at the next relist on the grid; it is Lost
// only after three periods without any read. A lost phase's grid is kept:
// two reads on it again bring it back, and trains on it at multiples of
// its period are its reads, not a competing reader; so is a train whose
// last two reads were each the first after a missed grid point of another
// qualified train at another period (held-up relists repeat at one period
// only by chance). A restarted kubelet
// first looks held up on the old grid; once its reads qualify at the
// period, begun after the last on the old grid, the phase moved.
//
// Limits: a symlinked manifest is opened under its target's name, in its
// target's folder, so symlinks are left out of the signature, and a folder
// of symlinks alone cannot be observed; a single-file --path opens no
// folder and is not supported; two readers at one period, half a period
// apart, look like one at half the period. Off Linux there is no IN_OPEN
// and the phase stays Unknown.
package relist
