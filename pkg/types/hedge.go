package types

import (
	"fmt"
	"strings"
)

// Hedge words the claim's outcomes beyond the change itself as one short
// clause, for the end of its message: the restarts the kubelet may make on
// the way (and through which files), that it may not make the change, that
// a stop and a start may follow, that the time is an estimate. "" when the
// claim allows nothing but the change. The full account is the change's
// Detail; this is the one place the clause is worded, so that every
// message says the same claim the same way.
func (c *Claim) Hedge() string {
	if c == nil || c.Op == "" {
		return "" // an amendment: its message says what it widens
	}
	var parts []string
	if more := c.Before.words(); more != "" {
		var notes []string
		switch {
		case c.Capped:
			notes = append(notes, "more ways than podwatch follows")
		case c.Folded:
			notes = append(notes, "the folder changed faster than podwatch follows every way")
		}
		if via := viaWords(c.Via); via != "" {
			notes = append(notes, via)
		}
		if len(notes) > 0 {
			more += " (" + strings.Join(notes, "; ") + ")"
		}
		parts = append(parts, more)
	}
	if c.MaySkip {
		parts = append(parts, "may skip this")
	}
	switch {
	case c.After.Max == 1:
		parts = append(parts, "then may stop and start it once")
	case c.After.Max > 1:
		parts = append(parts, fmt.Sprintf("then may stop and start it %d times", c.After.Max))
	}
	// A stop is dated when it is read, an ADD or UPDATE by its start; an
	// estimate of when a pod stopped is worth saying.
	if c.Estimate && c.Op == OpRemove {
		parts = append(parts, "its time is an estimate")
	}
	return strings.Join(parts, ", ")
}

// words says the restarts r allows on the way, "" for none.
func (r Range) words() string {
	switch {
	case r.Max == nil:
		return "may restart it more times first"
	case *r.Max == 0:
		return ""
	case r.Exact(1):
		return "restarts it once more first"
	case r.Min == *r.Max:
		return fmt.Sprintf("restarts it %d more times first", r.Min)
	case r.Min == 0 && *r.Max == 1:
		return "may restart it once more first"
	case r.Min == 0:
		return fmt.Sprintf("may restart it up to %d more times first", *r.Max)
	}
	return fmt.Sprintf("restarts it %d to %d more times first", r.Min, *r.Max)
}

// viaWords names the files a claim says the kubelet may have taken in on
// the way, by what made them where that is plain: an editor's or a tool's
// side file says more than its random name.
func viaWords(names []string) string {
	const most = 2
	words := make([]string, 0, min(len(names), most))
	for i, n := range names {
		if i == most {
			words[most-1] += fmt.Sprintf(" and %d more", len(names)-most)
			break
		}
		words = append(words, sideFile(n))
	}
	return strings.Join(words, ", ")
}

// sideFile says what made name, or name itself when it is not plain.
func sideFile(name string) string {
	switch {
	case len(name) == len("sedXXXXXX") && strings.HasPrefix(name, "sed"):
		return "sed's temp file"
	case strings.HasSuffix(name, "~"):
		return "the backup " + name
	case name == "4913":
		return "vim's test file"
	case strings.HasPrefix(name, ".#") || strings.HasPrefix(name, "#"):
		return "emacs's " + name
	}
	return name
}
