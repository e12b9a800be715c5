package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/lint"
)

const checkUsage = `podwatch check lints static pod manifests: it reports what the kubelet would
reject, and what it would run although nobody meant it to.

Usage:
  podwatch check [flags] PATH...

Each PATH is checked as if it were the kubelet's --pod-manifest-path: a single
manifest, or a directory of them (names starting with "." skipped,
subdirectories not entered). In a directory it also reports two files defining
the same pod, backup and temporary files the kubelet reads anyway, and entries
that are not regular files. Files and directories writable by anyone but root
are reported too; skip that with --skip permissions when checking a checkout.

Findings go to stdout, one per line ("file:line: severity: message"), and a
summary to stderr.

Exit status:
  0  every manifest is valid (warnings allowed)
  1  a manifest is invalid or two files define the same pod
     (with --strict, also any warning)
  2  usage error, or a path or file could not be read

Flags:
`

// runCheck is "podwatch check". It returns the process exit code.
func runCheck(args []string, stdout io.Writer, stderr io.Writer) int {
	opts := lint.Options{NodeName: agent.DefaultNodeName()}
	output := "text"
	var skip []string
	fs := pflag.NewFlagSet("podwatch check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // help on stdout, errors on stderr: both printed below
	fs.StringVar(&opts.NodeName, "node-name", opts.NodeName, "node the manifests are for, appended to pod names as the kubelet does; taken from $NODE_NAME, else the lowercased hostname")
	fs.StringVarP(&output, "output", "o", output, "format of the findings: text or json")
	fs.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on warnings too")
	fs.StringSliceVar(&skip, "skip", nil, "warning codes to leave out, comma-separated: "+codeList(lint.SkippableCodes()))

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printHelp(stdout, checkUsage, fs)
			return 0
		}
		return usageError(stderr, "podwatch check", err)
	}
	if output != "text" && output != "json" {
		return usageError(stderr, "podwatch check", fmt.Errorf("--output %q: want text or json", output))
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "podwatch check", errors.New("no PATH given"))
	}
	if opts.NodeName == "" {
		return usageError(stderr, "podwatch check", errors.New("--node-name is empty and neither $NODE_NAME nor the hostname gave one"))
	}
	for _, s := range skip {
		opts.Skip = append(opts.Skip, lint.Code(s))
	}
	report, err := lint.Check(fs.Args(), opts)
	if err != nil {
		return usageError(stderr, "podwatch check", err)
	}

	if output == "json" {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "podwatch check:", err)
		return 2
	}
	fmt.Fprintln(stderr, report.Summary())
	switch report.Result() {
	case lint.Pass:
		return 0
	case lint.Fail:
		return 1
	default:
		return 2
	}
}

func codeList(codes []lint.Code) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
