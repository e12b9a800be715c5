package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The kubelet decodes a JSON rendering of the manifest and so loses every
// position. To name lines and to spot what it silently drops, podwatch keeps
// its own light tree of the first document with the line of every node.

type nodeKind uint8

const (
	scalarNode nodeKind = iota
	mapNode
	seqNode
)

// scalarType is the JSON type a scalar becomes once the kubelet's YAML
// library (YAML 1.1 rules) has resolved it.
type scalarType uint8

const (
	strScalar scalarType = iota
	numScalar
	boolScalar
	nullScalar
)

type node struct {
	kind  nodeKind
	line  int
	value string     // scalars only
	typ   scalarType // scalars only
	pairs []pair     // mappings, in source order, duplicates kept
	items []*node    // sequences
	size  int64      // YAML only: bytes once aliases are expanded, capped
}

type pair struct {
	key  string
	line int // line of the key
	val  *node
	dup  bool // an earlier pair in the same mapping has the same key
	// shadowed: a later pair has the same key and the YAML-to-JSON step
	// keeps only that one. JSON duplicates are all decoded, in order.
	shadowed bool
	merged   bool // came in through a YAML merge key ("<<")
}

// get returns the value the kubelet keeps for key: the last one written.
func (n *node) get(key string) (*pair, bool) {
	if n == nil || n.kind != mapNode {
		return nil, false
	}
	for i := len(n.pairs) - 1; i >= 0; i-- {
		if n.pairs[i].key == key {
			return &n.pairs[i], true
		}
	}
	return nil, false
}

// lineIndex maps byte offsets to 1-based lines.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	idx := lineIndex{0}
	for i, b := range data {
		if b == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (l lineIndex) line(off int64) int {
	return sort.Search(len(l), func(i int) bool { return int64(l[i]) > off })
}

// maxExpanded bounds the size a YAML document may reach once its aliases are
// expanded. The kubelet's YAML library only refuses extreme alias ratios, so a
// handful of aliases to a multi-megabyte anchor would otherwise be copied out
// hundreds of times.
const maxExpanded = 2 * MaxSize

// yamlDoc is the first document of a YAML stream plus what follows it.
type yamlDoc struct {
	root     *node
	expanded int64 // bytes the document occupies with aliases expanded
	extra    int   // line of a second, non-empty document; 0 when none
	extraErr error // a syntax error in later documents, which the kubelet never reads
}

// expandedSize is the size the first document of data reaches once its
// aliases are expanded, counted as yamlBuilder counts it (capped past
// maxExpanded) but without building podwatch's tree. 0 when it does not
// parse: the conversion that follows reports that.
func expandedSize(data []byte) int64 {
	var first yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&first); err != nil {
		return 0
	}
	memo := map[*yaml.Node]int64{}
	var size func(y *yaml.Node) int64
	size = func(y *yaml.Node) int64 {
		if y == nil {
			return 8
		}
		if s, ok := memo[y]; ok {
			return s
		}
		n := int64(len(y.Value)) + 8
		if y.Anchor != "" {
			memo[y] = n // a self-reference ends here
		}
		switch y.Kind {
		case yaml.DocumentNode:
			if len(y.Content) > 0 {
				n = size(y.Content[0])
			}
		case yaml.AliasNode:
			n = size(y.Alias)
		case yaml.SequenceNode:
			for _, c := range y.Content {
				n = min(n+size(c), maxExpanded+1)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(y.Content); i += 2 {
				n = min(n+size(y.Content[i+1])+int64(len(y.Content[i].Value)), maxExpanded+1)
			}
		}
		if y.Anchor != "" {
			memo[y] = n
		}
		return n
	}
	return size(&first)
}

// parseYAML builds the tree of the first document. Aliases share the anchor's
// subtree instead of copying it, so building is linear in the input size.
func parseYAML(data []byte) (*yamlDoc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return &yamlDoc{}, nil
		}
		return nil, err
	}
	b := &yamlBuilder{memo: map[*yaml.Node]*node{}}
	root := b.build(&first)
	doc := &yamlDoc{root: root, expanded: root.size}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			doc.extraErr = err
			break
		}
		if doc.extra == 0 && !emptyDocument(&next) {
			doc.extra = next.Line
		}
	}
	return doc, nil
}

func emptyDocument(n *yaml.Node) bool {
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return true
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null" && (c.Value == "" || c.Value == "~" || c.Value == "null")
}

type yamlBuilder struct {
	memo map[*yaml.Node]*node // anchored nodes, so aliases share them
}

func (b *yamlBuilder) build(y *yaml.Node) *node {
	if y == nil {
		return &node{kind: scalarNode, typ: nullScalar}
	}
	// Only anchored nodes can be reached twice (through aliases).
	if y.Anchor != "" {
		if n, ok := b.memo[y]; ok {
			return n
		}
	}
	n := &node{line: y.Line, size: int64(len(y.Value)) + 8}
	if y.Anchor != "" {
		// Registered before descending so a self-referencing anchor ends here.
		b.memo[y] = n
	}
	switch y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			n.typ = nullScalar
			return n
		}
		*n = *b.build(y.Content[0])
	case yaml.AliasNode:
		*n = *b.build(y.Alias)
	case yaml.SequenceNode:
		n.kind = seqNode
		n.items = make([]*node, 0, len(y.Content))
		for _, c := range y.Content {
			it := b.build(c)
			n.items = append(n.items, it)
			n.size = min(n.size+it.size, maxExpanded+1)
		}
	case yaml.MappingNode:
		n.kind = mapNode
		b.buildMapping(n, y)
	default:
		n.kind = scalarNode
		n.value = y.Value
		n.typ = resolveScalar(y)
		if n.typ == numScalar {
			n.value = yamlNumberAsJSON(y.Value)
		}
	}
	return n
}

func (b *yamlBuilder) buildMapping(n *node, y *yaml.Node) {
	var merges []*node
	n.pairs = make([]pair, 0, len(y.Content)/2)
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		val := b.build(v)
		n.size = min(n.size+val.size+int64(len(k.Value)), maxExpanded+1)
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			if val.kind == seqNode {
				merges = append(merges, val.items...)
			} else {
				merges = append(merges, val)
			}
			continue
		}
		key := yamlKey(b.build(k), k)
		n.pairs = append(n.pairs, pair{key: key, line: k.Line, val: val})
	}
	markRepeats(n.pairs)
	if len(merges) == 0 {
		return
	}
	// Explicit keys win over merged ones, and earlier merge sources over later.
	have := make(map[string]bool, len(n.pairs))
	for _, p := range n.pairs {
		have[p.key] = true
	}
	var merged []pair
	for _, m := range merges {
		if m.kind != mapNode {
			continue
		}
		for _, p := range m.pairs {
			if p.shadowed || have[p.key] {
				continue
			}
			have[p.key] = true
			p.merged, p.dup = true, false
			merged = append(merged, p)
		}
	}
	n.pairs = append(merged, n.pairs...)
}

// markRepeats flags every pair whose key appeared before (dup) and every
// pair a later one overrides (shadowed). Small mappings, the usual case, are
// scanned without allocating.
func markRepeats(pairs []pair) {
	if len(pairs) <= 16 {
		for i := range pairs {
			for j := 0; j < i; j++ {
				if pairs[j].key == pairs[i].key {
					pairs[i].dup = true
					pairs[j].shadowed = true
				}
			}
		}
		return
	}
	last := make(map[string]int, len(pairs))
	for i := range pairs {
		if j, ok := last[pairs[i].key]; ok {
			pairs[i].dup = true
			pairs[j].shadowed = true
		}
		last[pairs[i].key] = i
	}
}

// yamlKey renders a mapping key the way the kubelet's YAML-to-JSON step does.
func yamlKey(kn *node, k *yaml.Node) string {
	if kn.kind != scalarNode {
		return k.Value
	}
	switch kn.typ {
	case boolScalar:
		return strconv.FormatBool(yaml11Bool(k.Value))
	case nullScalar:
		return "null"
	}
	return k.Value
}

var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false,
	"false": false, "False": false, "FALSE": false, "off": false, "Off": false, "OFF": false,
}

func yaml11Bool(s string) bool { return yaml11Bools[s] }

// resolveScalar applies the YAML 1.1 rules of the kubelet's YAML library,
// which differ from YAML 1.2 (yes/no/on/off are booleans, 010 is octal).
func resolveScalar(y *yaml.Node) scalarType {
	if y.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return strScalar
	}
	if y.Style&yaml.TaggedStyle != 0 {
		switch y.Tag {
		case "!!str", "!!binary":
			return strScalar
		case "!!int", "!!float":
			return numScalar
		case "!!bool":
			return boolScalar
		case "!!null":
			return nullScalar
		}
	}
	v := y.Value
	switch v {
	case "", "~", "null", "Null", "NULL":
		return nullScalar
	}
	if _, ok := yaml11Bools[v]; ok {
		return boolScalar
	}
	if looksNumeric(v) {
		return numScalar
	}
	return strScalar
}

// yamlNumberAsJSON renders a YAML 1.1 number as the JSON literal the
// kubelet's converter writes (hex and octal become decimal, 80.0 becomes 80).
func yamlNumberAsJSON(v string) string {
	plain := strings.ReplaceAll(v, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return strconv.FormatUint(u, 10)
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil {
		return v
	}
	b, err := json.Marshal(f)
	if err != nil {
		return v
	}
	return string(b)
}

func looksNumeric(v string) bool {
	switch strings.TrimLeft(v, "+-") {
	case ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN":
		return true
	}
	plain := strings.ReplaceAll(v, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseFloat(plain, 64); err == nil {
		return !strings.ContainsAny(plain, "xXpP")
	}
	return false
}

// parseJSON builds the tree of a JSON document with the line of each token.
// The kubelet feeds JSON (anything starting with "{") to its decoder as is.
func parseJSON(data []byte) (*node, error) {
	lines := newLineIndex(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var build func() (*node, error)
	build = func() (*node, error) {
		// InputOffset before Token points at the whitespace before the token;
		// skip it so the line is the token's own.
		start := skipSpace(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		n := &node{line: lines.line(start)}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				n.kind = mapNode
				for dec.More() {
					kstart := skipSpace(data, dec.InputOffset())
					kt, err := dec.Token()
					if err != nil {
						return nil, err
					}
					key, _ := kt.(string)
					v, err := build()
					if err != nil {
						return nil, err
					}
					n.pairs = append(n.pairs, pair{key: key, line: lines.line(kstart), val: v})
				}
				markRepeats(n.pairs)
				// Repeated JSON keys are all decoded in turn (objects merge),
				// so none is skipped when checking types.
				for i := range n.pairs {
					n.pairs[i].shadowed = false
				}
			case '[':
				n.kind = seqNode
				for dec.More() {
					v, err := build()
					if err != nil {
						return nil, err
					}
					n.items = append(n.items, v)
				}
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return nil, err
			}
		case string:
			n.value, n.typ = t, strScalar
		case json.Number:
			n.value, n.typ = t.String(), numScalar
		case bool:
			n.value, n.typ = strconv.FormatBool(t), boolScalar
		case nil:
			n.typ = nullScalar
		}
		return n, nil
	}
	return build()
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}
