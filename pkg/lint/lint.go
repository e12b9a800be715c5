package lint

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// Options says how to check.
type Options struct {
	// NodeName is the node the manifests are for: the kubelet appends it to
	// pod names, so it decides which names are too long and which files
	// define the same pod.
	NodeName string
	// Strict makes warnings fail the check too.
	Strict bool
	// Skip lists warning codes to leave out, e.g. CodePermissions when the
	// files are a checkout rather than the node's.
	Skip []Code
}

// Result is the outcome of a check as a whole.
type Result string

const (
	Pass       Result = "pass"       // every manifest is valid (warnings allowed unless strict)
	Fail       Result = "fail"       // a manifest is invalid, a pod is defined twice, or strict and warned
	Incomplete Result = "incomplete" // a path or file could not be read
)

// Report is what Check found.
type Report struct {
	NodeName string    `json:"nodeName"`
	Strict   bool      `json:"strict"`
	Files    []File    `json:"files"`    // in the order checked: by path, then byte-wise by name
	Findings []Finding `json:"findings"` // sorted by file then line
}

// Counts returns the number of error and warning findings.
func (r *Report) Counts() (errs, warnings int) {
	for _, f := range r.Findings {
		if f.Severity == Error {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}

// Checked returns how many files were read or tried, leaving out the entries
// that are not files the kubelet would read.
func (r *Report) Checked() int {
	n := 0
	for _, f := range r.Files {
		if f.Verdict != Skipped {
			n++
		}
	}
	return n
}

// Result is Incomplete when anything could not be read, since a file podwatch
// never saw may be the broken one; otherwise Fail on any error, or any
// warning when strict.
func (r *Report) Result() Result {
	errs, warnings := r.Counts()
	switch {
	case slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Code == CodeIOError }):
		return Incomplete
	case errs > 0, r.Strict && warnings > 0:
		return Fail
	default:
		return Pass
	}
}

// Check checks each path as the kubelet's --pod-manifest-path. A path that
// is missing or unreadable is a CodeIOError finding, not an error: the other
// paths are still worth checking. The error is for unusable options only.
func Check(paths []string, opts Options) (*Report, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	// validate has checked that the node name derives.
	opts.NodeName, _ = manifest.NodeName(opts.NodeName)
	if len(paths) == 0 {
		return nil, errors.New("no path to check")
	}
	c := &checker{opts: opts, skip: map[Code]bool{}}
	for _, code := range opts.Skip {
		c.skip[code] = true
	}
	c.report = &Report{NodeName: opts.NodeName, Strict: opts.Strict, Files: []File{}, Findings: []Finding{}}
	seen := map[string]bool{}
	for _, p := range paths {
		// The same path twice would report everything twice.
		if clean := filepath.Clean(p); !seen[clean] {
			seen[clean] = true
			c.checkPath(p)
		}
	}
	sortFindings(c.report.Findings)
	return c.report, nil
}

func (o *Options) validate() error {
	var errs []error
	if _, err := manifest.NodeName(o.NodeName); err != nil {
		errs = append(errs, err)
	}
	for _, code := range o.Skip {
		if !skippable[code] {
			errs = append(errs, fmt.Errorf("cannot skip %q: only %s can be skipped", code, skippableList()))
		}
	}
	return errors.Join(errs...)
}

// SkippableCodes returns the codes Options.Skip accepts, sorted.
func SkippableCodes() []Code {
	codes := make([]Code, 0, len(skippable))
	for c := range skippable {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

func skippableList() string {
	var names []string
	for _, c := range SkippableCodes() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// checker accumulates one Check's report.
type checker struct {
	opts   Options
	skip   map[Code]bool
	report *Report
}

func (c *checker) add(file string, line int, sev Severity, code Code, msg string) {
	if c.skip[code] {
		return
	}
	c.report.Findings = append(c.report.Findings, Finding{File: file, Line: line, Severity: sev, Code: code, Message: msg})
}
