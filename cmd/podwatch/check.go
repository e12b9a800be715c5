package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

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
	// Help goes to stdout, errors to stderr: both are printed below.
	fs.Usage = func() {}
	fs.StringVar(&opts.NodeName, "node-name", opts.NodeName, "node the manifests are for, appended to pod names as the kubelet does; taken from $NODE_NAME, else the lowercased hostname")
	fs.StringVarP(&output, "output", "o", output, "format of the findings: text or json")
	fs.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on warnings too")
	fs.StringSliceVar(&skip, "skip", nil, "warning codes to leave out, comma-separated: "+codeList(lint.SkippableCodes()))

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, checkUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
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
		err = writeCheckJSON(stdout, report)
	} else {
		err = writeCheckText(stdout, report)
	}
	if err != nil {
		fmt.Fprintln(stderr, "podwatch check:", err)
		return 2
	}
	fmt.Fprintln(stderr, checkSummary(report))
	switch report.Result() {
	case lint.Pass:
		return 0
	case lint.Fail:
		return 1
	default:
		return 2
	}
}


func writeCheckText(w io.Writer, r *lint.Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(displayPath(f.File))
		if f.Line > 0 {
			b.WriteString(":" + strconv.Itoa(f.Line))
		}
		fmt.Fprintf(&b, ": %s: %s\n", f.Severity, f.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// displayPath quotes a name with control characters, so a file named to look
// like a finding cannot forge lines in a CI log.
func displayPath(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(p)
	}
	return p
}

// checkJSON is the -o json document: the report plus the summary a script
// would otherwise have to recompute.
type checkJSON struct {
	*lint.Report
	Result   lint.Result `json:"result"`
	Checked  int         `json:"checked"`
	Errors   int         `json:"errors"`
	Warnings int         `json:"warnings"`
}

func writeCheckJSON(w io.Writer, r *lint.Report) error {
	errs, warnings := r.Counts()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(checkJSON{Report: r, Result: r.Result(), Checked: r.Checked(), Errors: errs, Warnings: warnings})
}

func checkSummary(r *lint.Report) string {
	errs, warnings := r.Counts()
	s := fmt.Sprintf("%s checked: %s, %s", plural(r.Checked(), "file"), plural(errs, "error"), plural(warnings, "warning"))
	if r.Result() == lint.Incomplete {
		s += " (incomplete: some paths could not be read)"
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func codeList(codes []lint.Code) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
