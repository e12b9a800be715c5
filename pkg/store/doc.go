// Package store keeps podwatch's state on the node's disk, under --state-dir:
// an append-only log of the Events podwatch recorded (so that counts continue
// after a restart and `podwatch events` can show local history) and small
// JSON state files such as the last published pod state.
//
// The log is built for crashes rather than speed: every record carries its
// length and a CRC-32C, is made durable before Write returns, and a torn
// last record costs only that record. The log is rewritten (compacted) to
// its live set before it grows past a bound, with the same
// write-temp/fsync/rename/fsync-dir sequence SaveJSON uses, so a reader that
// opens the file always sees a whole file. In memory the store keeps only
// where each Event's latest record is and when it last happened; listing
// and compaction read the records back from the log. One process writes a folder at a
// time (a flock on dir/lock, whose file names the holder for the others);
// any number may read it with ReadEvents. A folder that can only be read is
// opened with OpenReadOnly, which takes the same lock without writing.
package store
