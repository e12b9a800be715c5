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
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testdigest [-lines N] go test -json [flags] [packages]")
		os.Exit(2)
	}
	os.Exit(run(flag.Args(), *lines, os.Stdout, os.Stderr))
}

// run runs args with its output read as a test2json stream and returns the
// exit status.
func run(args []string, lines int, stdout, stderr io.Writer) int {
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
	readErr := d.read(out)
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
