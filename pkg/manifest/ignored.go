package manifest

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/podwatch/podwatch/pkg/types"
)

var unknownFieldRE = regexp.MustCompile(`^unknown field "(.*)"$`)

// collectIgnored records what the kubelet decodes without complaint but
// drops: fields its case-sensitive decoder does not know, and duplicate keys.
func (d *decoder) collectIgnored(strict []error) {
	fields := fieldCache{}
	for _, e := range strict {
		m := unknownFieldRE.FindStringSubmatch(e.Error())
		if m == nil {
			continue
		}
		path := m[1]
		// The kind check reads these case-insensitively, so they are used.
		if strings.EqualFold(path, "apiVersion") || strings.EqualFold(path, "kind") {
			continue
		}
		what := fmt.Sprintf("unknown field %q", path)
		if hint := caseHint(fields, path); hint != "" {
			what += fmt.Sprintf(" (field names are case-sensitive: did you mean %q?)", hint)
		}
		d.ignored = append(d.ignored, types.Ignored{Line: lineOf(d.root, path), What: what})
	}
	if d.root != nil {
		w := &dupWalker{seen: map[*node]bool{}, budget: walkBudget}
		w.walk(d.root, "")
		d.ignored = append(d.ignored, w.found...)
	}
}

// caseHint returns the real name of a field that differs from the unknown
// one only in case, or "".
func caseHint(fields fieldCache, path string) string {
	segs := splitPath(path)
	if len(segs) == 0 {
		return ""
	}
	t := podType
	for _, s := range segs[:len(segs)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case s.bracket && (t.Kind() == reflect.Slice || t.Kind() == reflect.Map):
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			ft, ok := fields.fieldsOf(t)[s.name]
			if !ok {
				return ""
			}
			t = ft
		case t.Kind() == reflect.Map:
			t = t.Elem()
		default:
			return ""
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	last := segs[len(segs)-1].name
	for name := range fields.fieldsOf(t) {
		if strings.EqualFold(name, last) {
			return name
		}
	}
	return ""
}

// dupWalker reports repeated keys in a mapping. A shared (aliased) subtree is
// visited once, so an anchor's duplicate is reported at the anchor only.
type dupWalker struct {
	seen   map[*node]bool
	budget int
	found  []types.Ignored
}

func (w *dupWalker) walk(n *node, path string) {
	if w.seen[n] || w.budget <= 0 {
		return
	}
	w.seen[n] = true
	w.budget--
	switch n.kind {
	case mapNode:
		for _, p := range n.pairs {
			child := p.key
			if path != "" {
				child = path + "." + p.key
			}
			if p.dup && !p.merged {
				w.found = append(w.found, types.Ignored{Line: p.line,
					What: fmt.Sprintf("duplicate key %q: only the last occurrence is used", child)})
			}
			w.walk(p.val, child)
		}
	case seqNode:
		for i, it := range n.items {
			w.walk(it, path+"["+strconv.Itoa(i)+"]")
		}
	}
}
