// Command userlatency measures podwatch's latency as a user sees it: from
// the rename of a new manifest into the watched folder to its
// StaticPodAdded line on podwatch's -o json stdout, read by this separate
// process. Beside podwatch, on the same folder and read the same way, runs a
// floor watcher (this binary with -floor): one inotify watch, one read of
// the renamed file, one line out, the least any watcher can do. The
// difference between the two is podwatch's own cost, free of the kernel's,
// the file system's and the reader's.
//
// Each sample renames a new manifest (a pod name of its own) from a sibling
// folder on the same file system into the watched one and waits for both
// lines before the next; a line missing past -timeout fails the run. The
// next rename comes -interval later: back to back, podwatch and the machine
// stay busy and hot, which a user's changes do not find, and the samples
// would all fall between two of podwatch's periodic relists. The
// samples stay in the folder (a removal would set podwatch's settle delay
// running into the next samples), so a run at N other manifests ends with
// N plus the samples and warm-ups.
//
// Usage:
//
//	userlatency [-podwatch bin/podwatch] [-samples 200] [-interval 100ms] [-others 0,1000] [-dir /dev/shm]
package main
