package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/eventlist"
)

const eventsUsage = `Prints the events in podwatch's local store, like kubectl get events -o wide.
Works while the agent runs.

Usage:
  podwatch events [flags]

Flags:
`

// runEvents is podwatch events: it reads the local store without locking
// it, so it works while the agent runs. Exit 0, 1 on a store it cannot read,
// 2 on usage errors.
func runEvents(args []string, stdout, stderr io.Writer, now time.Time) int {
	o := eventlist.DefaultOptions(agent.DefaultStateDir)
	fs := pflag.NewFlagSet("podwatch events", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, on stdout
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printHelp(stdout, eventsUsage, fs)
			return 0
		}
		return usageError(stderr, "podwatch events", err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podwatch events: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintln(stderr, "podwatch events:", err)
		return 2
	}
	n, err := eventlist.Print(stdout, o, now)
	if err != nil {
		fmt.Fprintln(stderr, "podwatch events:", err)
		return 1
	}
	if n == 0 && o.Output != "json" {
		fmt.Fprintf(stderr, "No events found in %s.\n", o.StateDir)
	}
	return 0
}
