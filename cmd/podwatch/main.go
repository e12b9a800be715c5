package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/agent"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `podwatch watches the kubelet's static pod manifests and records what the kubelet will do.

Usage:
  podwatch [flags]          run the agent
  podwatch check PATH...    lint manifests as the kubelet would read them (exit 1 on errors)
  podwatch events           print the events in the local store, like kubectl get events -o wide
  podwatch version          print the version
  podwatch help [COMMAND]   print this help, or a command's (as COMMAND --help)

Flags:
`

// defaultGCPercent trades a little CPU, spent mostly while the manifests are
// first decoded, for a smaller resident set on every node. GOGC overrides it.
const defaultGCPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain returns the process exit code: 0 ok, 1 runtime failure, 2 usage.
func realMain(args []string, stdout io.Writer, stderr *os.File) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			return runVersion(args[1:], stdout, stderr)
		case "help":
			return runHelp(args[1:], stdout, stderr)
		case "check":
			return runCheck(args[1:], stdout, stderr)
		case "events":
			return runEvents(args[1:], stdout, stderr, time.Now())
		}
	}
	f := defaultFlags()
	fs := pflag.NewFlagSet("podwatch", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, on stdout
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printHelp(stdout, usage, fs)
			return 0
		}
		return usageError(stderr, "podwatch", err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podwatch: unknown command %q\n", fs.Arg(0))
		return 2
	}
	if err := f.Agent.Complete(fs.Changed); err != nil {
		fmt.Fprintln(stderr, "podwatch:", err)
		return 2
	}
	if err := f.Validate(); err != nil {
		fmt.Fprintln(stderr, "podwatch:", err)
		return 2
	}
	log := f.logger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	a := agent.New(f.Agent, agent.Env{Clock: clock.RealClock{}, Stdout: stdout, Log: log, Version: version})
	if err := a.Run(ctx); err != nil {
		log.Error("podwatch failed", "err", err)
		return 1
	}
	return 0
}

// printHelp writes a command's usage text and its flags to w. Help that was
// asked for goes to stdout with exit 0, as other tools do, so it can be
// paged or grepped; only usage errors go to stderr. pflag would print the
// help to the flag set's output, which is stderr for the errors, so each
// command's Usage is a no-op and calls this on ErrHelp instead.
func printHelp(w io.Writer, text string, fs *pflag.FlagSet) {
	fmt.Fprint(w, text)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// usageError reports a usage error (pflag's ContinueOnError prints none for
// a flag) and returns the usage exit code.
func usageError(w io.Writer, cmd string, err error) int {
	fmt.Fprintf(w, "%s: %v\nRun '%s --help' for usage.\n", cmd, err, cmd)
	return 2
}
