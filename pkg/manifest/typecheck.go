package manifest

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// walkBudget caps the nodes a single tree walk visits. Aliases share
// subtrees, so a walk could otherwise revisit one anchor exponentially often.
const walkBudget = 1 << 21

var (
	podType         = reflect.TypeFor[v1.Pod]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// fieldCache maps a struct type's JSON names to field types, as the
// case-sensitive decoder sees them. It lives for one Decode call.
type fieldCache map[reflect.Type]map[string]reflect.Type

func (c fieldCache) fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := c[t]; ok {
		return m
	}
	m := map[string]reflect.Type{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			m[name] = f.Type
		}
	}
	add(t)
	c[t] = m
	return m
}

// findTypeMismatch finds the first value that cannot decode into its v1.Pod
// field, so a decode failure can name the indexed path and the line.
func findTypeMismatch(root *node) (path string, line int, what string, found bool) {
	if root == nil {
		return "", 0, "", false
	}
	w := &typeWalker{budget: walkBudget, fields: fieldCache{}}
	w.walk(root, podType, "", root.line)
	return w.path, w.line, w.what, w.found
}

type typeWalker struct {
	fields fieldCache
	budget int
	found  bool
	path   string
	line   int
	what   string
}

func (w *typeWalker) fail(path string, line int, what string) {
	w.found, w.path, w.line, w.what = true, strings.TrimPrefix(path, "."), line, what
}

func (w *typeWalker) walk(n *node, t reflect.Type, path string, line int) {
	if w.found || w.budget <= 0 {
		return
	}
	w.budget--
	if n.kind == scalarNode && n.typ == nullScalar {
		return // null leaves any field at its zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		w.custom(n, t, path, line)
		return
	}
	switch t.Kind() {
	case reflect.Interface:
	case reflect.Struct:
		if n.kind != mapNode {
			w.fail(path, line, "expected an object, got "+describeNode(n))
			return
		}
		fields := w.fields.fieldsOf(t)
		for _, p := range n.pairs {
			if ft, ok := fields[p.key]; ok && !p.shadowed {
				w.walk(p.val, ft, path+"."+p.key, p.line)
			}
		}
	case reflect.Map:
		if n.kind != mapNode {
			w.fail(path, line, "expected an object, got "+describeNode(n))
			return
		}
		for _, p := range n.pairs {
			if !p.shadowed {
				w.walk(p.val, t.Elem(), path+"["+p.key+"]", p.line)
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			w.scalar(n, strScalar, "a base64 string", path, line)
			return
		}
		if n.kind != seqNode {
			w.fail(path, line, "expected a list, got "+describeNode(n))
			return
		}
		for i, it := range n.items {
			w.walk(it, t.Elem(), path+"["+strconv.Itoa(i)+"]", it.line)
		}
	case reflect.String:
		w.scalar(n, strScalar, "a string", path, line)
	case reflect.Bool:
		w.scalar(n, boolScalar, "a boolean", path, line)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !w.scalar(n, numScalar, "an integer", path, line) {
			return
		}
		v, err := strconv.ParseInt(n.value, 10, 64)
		if err != nil || reflect.New(t).Elem().OverflowInt(v) {
			w.fail(path, line, "expected an integer that fits "+t.Kind().String())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !w.scalar(n, numScalar, "an unsigned integer", path, line) {
			return
		}
		v, err := strconv.ParseUint(n.value, 10, 64)
		if err != nil || reflect.New(t).Elem().OverflowUint(v) {
			w.fail(path, line, "expected an unsigned integer that fits "+t.Kind().String())
		}
	case reflect.Float32, reflect.Float64:
		w.scalar(n, numScalar, "a number", path, line)
	}
}

func (w *typeWalker) scalar(n *node, want scalarType, desc, path string, line int) bool {
	if n.kind == scalarNode && n.typ == want {
		return true
	}
	what := "expected " + desc + ", got " + describeNode(n)
	if want == strScalar && n.kind == scalarNode {
		// The kubelet reads YAML 1.1: unquoted yes/no/on/off/y/n are booleans
		// and unquoted digits are numbers.
		what += " (quote the value to make it a string)"
	}
	w.fail(path, line, what)
	return false
}

// custom hands scalars to the type's own decoder (quantities, int-or-string,
// timestamps). Its error text is not shown, as some echo the input.
func (w *typeWalker) custom(n *node, t reflect.Type, path string, line int) {
	if n.kind != scalarNode {
		return
	}
	raw := n.value
	if n.typ == strScalar {
		b, _ := json.Marshal(n.value)
		raw = string(b)
	}
	u := reflect.New(t).Interface().(json.Unmarshaler)
	if err := u.UnmarshalJSON([]byte(raw)); err != nil {
		w.fail(path, line, "not a valid "+t.Name())
	}
}

func describeNode(n *node) string {
	switch n.kind {
	case mapNode:
		return "an object"
	case seqNode:
		return "a list"
	}
	switch n.typ {
	case numScalar:
		return "a number"
	case boolScalar:
		return "a boolean"
	case nullScalar:
		return "null"
	}
	return "a string"
}
