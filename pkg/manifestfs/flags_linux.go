package manifestfs

import "golang.org/x/sys/unix"

// openFlags keep a FIFO that replaced a regular file between stat and open
// from blocking the open; fstat then rejects it.
const openFlags = unix.O_NONBLOCK | unix.O_NOCTTY

// dirOpenFlags make the open of a listed directory fail, rather than block,
// if a FIFO took its place after the stat.
const dirOpenFlags = unix.O_DIRECTORY | unix.O_NONBLOCK
