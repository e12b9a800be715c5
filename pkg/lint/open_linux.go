package lint

import "syscall"

// openFlags keep a FIFO that replaced a file between stat and open from
// blocking the open; the fstat after it then rejects it.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// dirOpenFlags make the open fail, rather than block, if a FIFO took the
// directory's place after the stat.
const dirOpenFlags = syscall.O_DIRECTORY | syscall.O_NONBLOCK
