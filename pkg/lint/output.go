package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// WriteText prints the findings one a line, "file:line: severity: message".
func (r *Report) WriteText(w io.Writer) error {
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

// reportJSON is the -o json document: the report plus the summary a script
// would otherwise have to recompute.
type reportJSON struct {
	*Report
	Result   Result `json:"result"`
	Checked  int    `json:"checked"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
}

// WriteJSON prints the report with its summary as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	errs, warnings := r.Counts()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(reportJSON{Report: r, Result: r.Result(), Checked: r.Checked(), Errors: errs, Warnings: warnings})
}

// Summary is the one-line count of what was checked and found.
func (r *Report) Summary() string {
	errs, warnings := r.Counts()
	s := fmt.Sprintf("%s checked: %s, %s", plural(r.Checked(), "file"), plural(errs, "error"), plural(warnings, "warning"))
	if r.Result() == Incomplete {
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
