package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
)

const versionUsage = `Prints podwatch's version.

Usage:
  podwatch version
`

// runVersion is podwatch version. It has no flags, but --help is help, as
// for every other command, not a request for the version.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("podwatch version", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, on stdout
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printHelp(stdout, versionUsage, fs)
			return 0
		}
		return usageError(stderr, "podwatch version", err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podwatch version: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	fmt.Fprintln(stdout, "podwatch", version)
	return 0
}

// runHelp is podwatch help [COMMAND], what git and kubectl users type: the
// same text, on stdout with exit 0, as podwatch [COMMAND] --help.
func runHelp(args []string, stdout io.Writer, stderr *os.File) int {
	switch {
	case len(args) == 0:
		return realMain([]string{"--help"}, stdout, stderr)
	case len(args) > 1:
		fmt.Fprintf(stderr, "podwatch help: one command at most, got %q\n", args)
		return 2
	}
	switch args[0] {
	case "check", "events", "version":
		return realMain([]string{args[0], "--help"}, stdout, stderr)
	case "help", "-h", "--help":
		return realMain([]string{"--help"}, stdout, stderr)
	}
	fmt.Fprintf(stderr, "podwatch help: unknown command %q\nRun 'podwatch --help' for usage.\n", args[0])
	return 2
}
