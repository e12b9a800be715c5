package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	lines := flag.Int("lines", 25, "lines of each failed test's output in the digest")
	raw := flag.String("raw", "", "append the whole test2json stream, passing tests' output too, to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testdigest [-lines N] [-raw FILE] go test -json [flags] [packages]")
		os.Exit(2)
	}
	if *raw == "" {
		os.Exit(run(flag.Args(), *lines, nil, os.Stdout, os.Stderr))
	}
	f, err := os.OpenFile(*raw, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testdigest: %v\n", err)
		os.Exit(1)
	}
	code := run(flag.Args(), *lines, f, os.Stdout, os.Stderr)
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "testdigest: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// run runs args with its output read as a test2json stream and returns the
// exit status. With keep set, the stream is copied there as read: a
// passing test's log (a marked disagreement of the judge's) is otherwise
// gone.
func run(args []string, lines int, keep io.Writer, stdout, stderr io.Writer) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testdigest: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testdigest: %v\n", err)
		return 1
	}
	d := newDigest(stdout, lines)
	var in io.Reader = out
	if keep != nil {
		in = io.TeeReader(out, keep)
	}
	readErr := d.read(in)
	waitErr := cmd.Wait()
	d.summary()
	if readErr != nil {
		fmt.Fprintf(stderr, "testdigest: reading the output: %v\n", readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		return exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintf(stderr, "testdigest: %v\n", waitErr)
		return 1
	case readErr != nil || len(d.failed) > 0:
		return 1
	}
	return 0
}
