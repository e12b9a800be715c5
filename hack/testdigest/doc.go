// Command testdigest runs `go test -json` and prints what plain `go test`
// would, the output of failed tests only, followed by a digest: each failed
// test with the last lines of its output. CI shows only the end of a long
// log, and a failure deep in a suite that logs a great deal (the real-kubelet
// judge) is otherwise out of sight by then.
//
// Usage:
//
//	testdigest [-lines N] go test -json [flags] [packages]
//
// It exits with the command's status, or 1 when a test failed and the command
// still exited 0.
package main
