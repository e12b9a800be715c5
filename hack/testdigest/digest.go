package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // of build output
	FailedBuild string // of a package that failed to build
}

// failure is one failed test and the end of its output.
type failure struct {
	name string // package, and test when there is one
	tail []string
}

// digest prints a test2json stream as plain `go test` does and keeps the
// failures for the summary.
type digest struct {
	w      io.Writer
	lines  int
	held   map[string][]string // a running test's output, by package and test
	failed []failure
}

func newDigest(w io.Writer, lines int) *digest {
	return &digest{w: w, lines: lines, held: map[string][]string{}}
}

func (d *digest) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		d.line(sc.Bytes())
	}
	return sc.Err()
}

func (d *digest) line(b []byte) {
	var ev event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil {
		fmt.Fprintf(d.w, "%s\n", b) // not test2json: the command's own
		return
	}
	key := ev.Package + " " + ev.Test
	switch ev.Action {
	case "build-output":
		fmt.Fprint(d.w, ev.Output)
		d.held[ev.ImportPath] = append(d.held[ev.ImportPath], ev.Output)
	case "output":
		// Plain `go test` prints a package's own lines as they come and a
		// test's only when it fails.
		if ev.Test == "" {
			fmt.Fprint(d.w, ev.Output)
		}
		if !progress(ev.Output) {
			d.held[key] = append(d.held[key], ev.Output)
		}
	case "pass", "skip":
		delete(d.held, key)
	case "fail":
		out := d.held[key]
		delete(d.held, key)
		name := strings.TrimSpace(ev.Package + " " + ev.Test)
		switch {
		case ev.Test != "":
			for _, l := range out {
				fmt.Fprint(d.w, l)
			}
		case ev.FailedBuild != "":
			name, out = name+" (build failed)", d.held[ev.FailedBuild]
		case d.failedIn(ev.Package):
			return // its tests say why
		}
		if ev.Test != "" && d.failedIn(name+"/") && onlyVerdicts(out) {
			return // a parent that failed for its subtests alone
		}
		d.failed = append(d.failed, failure{name: name, tail: tail(out, d.lines)})
	}
}

// failedIn is whether a test named with prefix failed already: of a
// package (its path), or a subtest (its parent's name and a slash).
func (d *digest) failedIn(prefix string) bool {
	if !strings.HasSuffix(prefix, "/") {
		prefix += " "
	}
	for _, f := range d.failed {
		if strings.HasPrefix(f.name, prefix) {
			return true
		}
	}
	return false
}

// onlyVerdicts is whether out holds no more than "--- FAIL" lines.
func onlyVerdicts(out []string) bool {
	for _, l := range out {
		if !strings.HasPrefix(strings.TrimSpace(l), "--- ") {
			return false
		}
	}
	return true
}

// progress is a line that plain `go test` leaves out: the -v markers.
func progress(s string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func tail(out []string, n int) []string {
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// summary prints each failure with the end of its output, last in the log.
func (d *digest) summary() {
	if len(d.failed) == 0 {
		return
	}
	fmt.Fprintf(d.w, "\n=== %d failed (the last %d lines of each):\n", len(d.failed), d.lines)
	for _, f := range d.failed {
		fmt.Fprintf(d.w, "--- %s\n", f.name)
		for _, l := range f.tail {
			fmt.Fprintf(d.w, "    %s", strings.TrimPrefix(l, "    "))
			if !strings.HasSuffix(l, "\n") {
				fmt.Fprintln(d.w)
			}
		}
	}
	names := make([]string, 0, len(d.failed))
	for _, f := range d.failed {
		names = append(names, f.name)
	}
	fmt.Fprintf(d.w, "=== failed: %s\n", strings.Join(names, "; "))
}
