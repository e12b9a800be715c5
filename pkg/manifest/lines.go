package manifest

import (
	"strconv"
	"strings"
)

// segment is one step of a field path such as spec.containers[0].image.
type segment struct {
	name    string
	bracket bool // written as [name]: a list index or a map key
}

// splitPath parses the field-path notation used in the kubelet's messages.
// Map keys in brackets may contain dots and brackets themselves, so a key
// ends only at a "]" followed by ".", "[" or the end of the path.
func splitPath(p string) []segment {
	var segs []segment
	for len(p) > 0 {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			end := -1
			for i := 1; i < len(p); i++ {
				if p[i] == ']' && (i+1 == len(p) || p[i+1] == '.' || p[i+1] == '[') {
					end = i
					break
				}
			}
			if end < 0 {
				return append(segs, segment{name: p[1:], bracket: true})
			}
			segs = append(segs, segment{name: p[1:end], bracket: true})
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			segs = append(segs, segment{name: p[:end]})
			p = p[end:]
		}
	}
	return segs
}

// lineOf returns the line of the deepest node of path present in the
// document: a defaulted or missing field is reported at its parent.
func lineOf(root *node, path string) int {
	if root == nil {
		return 0
	}
	n, line := root, root.line
	for _, s := range splitPath(path) {
		switch {
		case n.kind == seqNode && s.bracket:
			i, err := strconv.Atoi(s.name)
			if err != nil || i < 0 || i >= len(n.items) {
				return line
			}
			n = n.items[i]
			line = n.line
		case n.kind == mapNode:
			p, ok := n.get(s.name)
			if !ok {
				return line
			}
			n, line = p.val, p.line
		default:
			return line
		}
	}
	return line
}
