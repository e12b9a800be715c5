package diff

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/podwatch/podwatch/pkg/types"
)

// A message is read in a terminal hours later, often cut at its width:
// its first clause, up to the first "; ", says what the kubelet does, with
// the file, the field and the winner when it changed. What it leaves out
// (the full field list, the races, how an estimate was made) goes to the
// change's Detail. The helpers here shorten what goes in that clause.

// maxValue bounds one value (an image, an error) in a first clause.
const maxValue = 64

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// podName is the name part of a pod key "namespace/name".
func podName(key string) string {
	if _, name, ok := strings.Cut(key, "/"); ok {
		return name
	}
	return key
}

// runs says what pod f runs: its image, or with more than one container
// each one's name and image.
func runs(f *types.File) string {
	cs := f.Pod.Containers
	if len(cs) == 1 {
		_, image, _ := strings.Cut(cs[0], "=")
		return clip(image, maxValue)
	}
	return clip(strings.Join(cs, ", "), 2*maxValue)
}

// glance renders the first of the fields changed for a first clause, the
// container named only when the pod has more than one, and how many more
// there are; the full list is for the detail.
func glance(changes []fieldChange, containers int) string {
	if len(changes) == 0 {
		return ""
	}
	out := changes[0].short(containers)
	if n := len(changes) - 1; n == 1 {
		out += " and 1 more field"
	} else if n > 1 {
		out += fmt.Sprintf(" and %d more fields", n)
	}
	return out
}

// short is c for a first clause: its path without the spec and, in a pod
// of one container, without the container; an image's repository said
// once when only its tag changed.
func (c fieldChange) short(containers int) string {
	path := shortPath(c.path, containers)
	switch c.kind {
	case added:
		if c.new != "" {
			return fmt.Sprintf("%s added (%s)", path, clip(c.new, maxValue/2))
		}
		return path + " added"
	case removed:
		if c.old != "" {
			return fmt.Sprintf("%s removed (%s)", path, clip(c.old, maxValue/2))
		}
		return path + " removed"
	case hidden:
		return path + " changed"
	}
	old, cur := c.old, c.new
	if strings.HasSuffix(path, "image") {
		old, cur = tags(old, cur)
	}
	return fmt.Sprintf("%s %s → %s", path, clip(old, maxValue/2), clip(cur, maxValue/2))
}

// shortPath is a field's path without the spec and, in a pod of one
// container, without the container.
func shortPath(path string, containers int) string {
	path = strings.TrimPrefix(path, "spec.")
	if rest, ok := strings.CutPrefix(path, "containers["); ok {
		if name, field, ok := strings.Cut(rest, "]."); ok {
			path = name + " " + field
			if containers == 1 {
				path = field
			}
		}
	}
	return path
}

// respeltGlance is the first of the quantities respelt (respelt's words),
// for a first clause.
func respeltGlance(r []string, containers int) string {
	path, values, _ := strings.Cut(r[0], ": ")
	out := shortPath(path, containers) + " respelt " + strings.Replace(values, " -> ", " → ", 1)
	if n := len(r) - 1; n > 0 {
		out += fmt.Sprintf(" and %d more", n)
	}
	return out
}

// tags shortens two images of one repository to their tags.
func tags(old, cur string) (string, string) {
	i, j := strings.LastIndexAny(old, ":@"), strings.LastIndexAny(cur, ":@")
	if i <= 0 || j <= 0 || old[:i] != cur[:j] || strings.Contains(old[i:], "/") || strings.Contains(cur[j:], "/") {
		return old, cur
	}
	return old[i+1:], cur[j+1:]
}

// problem shortens an error from decoding or validating a manifest to its
// first line, without the list of supported values and the path's spec
// prefix.
func problem(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.Index(s, ": supported values:"); i >= 0 {
		s = s[:i]
	}
	s = strings.Replace(s, "spec.containers[0].", "", 1)
	return clip(s, maxValue+16)
}

// updateFacts is what an UPDATE's first clause says of the pod's change.
type updateFacts struct {
	fields      []fieldChange
	describeErr error
	content     bool // the content changed, not only the file
	restyled    bool
	respelt     []string // respelt's words, when restyled
	uidPinned   bool
	shadow      bool // f is shadowed: the next relist goes back
}

// updated is an UPDATE's message: the file, what changed, and what the
// kubelet does, then the hedges.
func (c *computation) updated(key string, p PodState, f *types.File, u updateFacts, hedges []string) string {
	var what string
	switch {
	case u.describeErr != nil:
		what = "content changed"
	case len(u.fields) > 0:
		what = glance(u.fields, len(f.Pod.Containers))
	case u.content:
		what = "metadata changed"
	case u.restyled && len(u.respelt) > 0:
		what = respeltGlance(u.respelt, len(f.Pod.Containers))
	case u.restyled:
		what = "a new config hash, no field changed"
	}
	head := f.Name + ": " + what
	if p.File != f.Name {
		head = fmt.Sprintf("now from %s (was %s)", f.Name, p.File)
		if what != "" {
			head += ", " + what
		}
	}
	// A pod's file changed gives it a new UID, which the clause need not
	// say when it names the file.
	effect := "the kubelet restarts the pod (new UID)"
	if p.File != f.Name {
		effect = "the kubelet restarts the pod"
	}
	if u.uidPinned {
		effect = "the kubelet updates the pod in place (metadata.uid is set)"
	}
	var again string
	if u.shadow {
		if w := relistWinner(c.snap.Files, key); w != nil {
			again = fmt.Sprintf(", and again at its next relist (back to %s)", w.Name)
		}
	}
	return c.glanced(head, effect, again, hedges...)
}

// glanced is a message of head, what the kubelet does (effect, as
// watchless words it) and then suffix, as its first clause; then the
// hedges.
func (c *computation) glanced(head, effect, suffix string, hedges ...string) string {
	first, rest, _ := strings.Cut(c.watchless(effect), "; ")
	if rest != "" {
		hedges = append(hedges, rest)
	}
	msg := head + ": " + first + suffix
	if len(hedges) > 0 {
		msg += "; " + strings.Join(hedges, "; ")
	}
	return msg
}

// plainStart is what an ADD says the kubelet does when nothing else is
// known of the pod.
const plainStart = "the kubelet starts it"

// startMessage is an ADD's message: the file, that the kubelet starts the
// pod (again, when a relist dropped it or an invalid span may have), and
// what it runs.
func (c *computation) startMessage(f *types.File, effect string, maySkip bool) string {
	glance := "the kubelet starts the pod"
	var hedges []string
	if effect != plainStart {
		glance += " again"
		if maySkip {
			hedges = append(hedges, "if it ran on, the kubelet may skip this restart")
		}
	}
	return c.glanced(f.Name, glance, " ("+runs(f)+")", hedges...)
}

// hedged is msg with its hedges rendered from the change's claim: its
// first clause, then the claim's one (types.Claim.Hedge). The builders'
// own hedge sentences are in the detail. A change without a claim keeps
// its words.
func hedged(msg string, cl *types.Claim) string {
	if cl == nil {
		return msg
	}
	first, _, _ := strings.Cut(msg, "; ")
	if h := cl.Hedge(); h != "" {
		return first + "; " + h
	}
	return first
}
