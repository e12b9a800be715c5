package diff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// fieldChange is one leaf that differs between two pods.
type fieldChange struct {
	path     string
	old, new string // empty with hidden; for an added/removed item, a scalar list's value
	kind     changeKind
}

type changeKind int

const (
	changed changeKind = iota
	added
	removed
	hidden // changed, but the value may be secret: name the field only
)

func (c fieldChange) String() string {
	switch c.kind {
	case added:
		if c.new != "" {
			return fmt.Sprintf("%s: added (%s)", c.path, c.new)
		}
		return c.path + ": added"
	case removed:
		if c.old != "" {
			return fmt.Sprintf("%s: removed (%s)", c.path, c.old)
		}
		return c.path + ": removed"
	case hidden:
		return c.path + ": changed"
	}
	return fmt.Sprintf("%s: %s -> %s", c.path, c.old, c.new)
}

// podFieldChanges lists what differs in the parts of a pod the kubelet
// compares (spec, labels, annotations), list items named by their merge key,
// and metadata.uid, which decides whether the kubelet restarts the pod.
// oldSpelt and curSpelt are the pods' types.Pod.Spelt: a quantity changed
// is shown as its file wrote it.
func podFieldChanges(old, cur *v1.Pod, oldSpelt, curSpelt map[string]string) []fieldChange {
	w := walker{oldSpelt: oldSpelt, curSpelt: curSpelt}
	w.value("metadata.uid", reflect.ValueOf(old.UID), reflect.ValueOf(cur.UID), "", false)
	w.maps("metadata.labels", reflect.ValueOf(old.Labels), reflect.ValueOf(cur.Labels), false)
	w.maps("metadata.annotations", reflect.ValueOf(old.Annotations), reflect.ValueOf(cur.Annotations), true)
	w.value("spec", reflect.ValueOf(old.Spec), reflect.ValueOf(cur.Spec), "", false)
	return w.out
}

type walker struct {
	out                []fieldChange
	oldSpelt, curSpelt map[string]string
}

// spelt is a quantity's text as its file wrote it, else canonical.
func spelt(m map[string]string, path, canonical string) string {
	if s, ok := m[path]; ok {
		return s
	}
	return canonical
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	intstrType   = reflect.TypeFor[intstr.IntOrString]()
	timeType     = reflect.TypeFor[metav1.Time]()
)

// sensitive reports whether values under a JSON field name may carry
// secrets, so only the fact of a change is reported.
func sensitive(jsonName string) bool {
	switch jsonName {
	case "env", "command", "args", "value", "annotations":
		return true
	}
	return false
}

func (w *walker) add(c fieldChange, secret bool) {
	if secret {
		c.old, c.new = "", ""
		if c.kind == changed {
			c.kind = hidden
		}
	}
	w.out = append(w.out, c)
}

func (w *walker) value(path string, a, b reflect.Value, mergeKey string, secret bool) {
	if a.Kind() == reflect.Pointer || a.Kind() == reflect.Interface {
		switch {
		case a.IsNil() && b.IsNil():
			return
		case a.IsNil():
			w.add(fieldChange{path: path, kind: added}, secret)
			return
		case b.IsNil():
			w.add(fieldChange{path: path, kind: removed}, secret)
			return
		}
		w.value(path, a.Elem(), b.Elem(), mergeKey, secret)
		return
	}
	switch a.Type() {
	case quantityType, intstrType, timeType:
		// Compared canonically, as the kubelet compares a pod whose
		// metadata.uid is set; a respelling alone is the restyle case.
		as, bs := leafString(a), leafString(b)
		if as != bs {
			w.add(fieldChange{path: path, old: spelt(w.oldSpelt, path, as), new: spelt(w.curSpelt, path, bs)}, secret)
		}
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		w.structs(path, a, b, secret)
	case reflect.Slice:
		w.slices(path, a, b, mergeKey, secret)
	case reflect.Map:
		w.maps(path, a, b, secret)
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			w.add(fieldChange{path: path, old: leafString(a), new: leafString(b)}, secret)
		}
	}
}

func (w *walker) structs(path string, a, b reflect.Value, secret bool) {
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || plainlyEqual(a.Field(i), b.Field(i)) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		sub := path
		if name != "" { // inlined struct keeps the parent's path
			sub = path + "." + name
		}
		w.value(sub, a.Field(i), b.Field(i), f.Tag.Get("patchMergeKey"), secret || sensitive(name))
	}
}

// plainlyEqual reports two values equal without walking them: scalars of
// one value, or nil or empty on both sides (which the walk would find
// without a change). Most of a pod's fields are such, and skipping them
// before their JSON name is looked up is most of the walk's cost.
func plainlyEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Pointer, reflect.Interface:
		return a.IsNil() && b.IsNil()
	case reflect.Slice, reflect.Map:
		return a.Len() == 0 && b.Len() == 0
	}
	return false
}

func (w *walker) slices(path string, a, b reflect.Value, mergeKey string, secret bool) {
	if reflect.DeepEqual(a.Interface(), b.Interface()) {
		return
	}
	elem := a.Type().Elem()
	field, ok := mergeKeyField(elem, mergeKey)
	if !ok {
		w.byIndex(path, a, b, secret)
		return
	}
	key := func(v reflect.Value) string { return fmt.Sprint(v.FieldByIndex(field).Interface()) }
	olds := map[string]reflect.Value{}
	for i := range a.Len() {
		olds[key(a.Index(i))] = a.Index(i)
	}
	seen := map[string]bool{}
	for i := range b.Len() {
		k := key(b.Index(i))
		seen[k] = true
		sub := fmt.Sprintf("%s[%s]", path, k)
		if o, ok := olds[k]; ok {
			w.value(sub, o, b.Index(i), "", secret)
		} else {
			w.add(fieldChange{path: sub, kind: added}, secret)
		}
	}
	for i := range a.Len() {
		if k := key(a.Index(i)); !seen[k] {
			w.add(fieldChange{path: fmt.Sprintf("%s[%s]", path, k), kind: removed}, secret)
		}
	}
}

// byIndex compares a list without a merge key item by item. The items both
// versions share at the start and at the end are skipped, so one item
// inserted or dropped is named once rather than shifting every later index;
// an index is that of the new list, or of the old one for a removed item.
// Secret lists (command, args) are named by index without their values.
func (w *walker) byIndex(path string, a, b reflect.Value, secret bool) {
	la, lb := a.Len(), b.Len()
	pre := 0
	for pre < la && pre < lb && reflect.DeepEqual(a.Index(pre).Interface(), b.Index(pre).Interface()) {
		pre++
	}
	suf := 0
	for suf < la-pre && suf < lb-pre && reflect.DeepEqual(a.Index(la-1-suf).Interface(), b.Index(lb-1-suf).Interface()) {
		suf++
	}
	ma, mb := la-pre-suf, lb-pre-suf
	item := func(v reflect.Value) string { // a scalar's value; a struct is only named
		switch v.Kind() {
		case reflect.Struct, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			return ""
		}
		return leafString(v)
	}
	for i := range max(ma, mb) {
		switch {
		case i >= ma:
			w.add(fieldChange{path: fmt.Sprintf("%s[%d]", path, pre+i), new: item(b.Index(pre + i)), kind: added}, secret)
		case i >= mb:
			w.add(fieldChange{path: fmt.Sprintf("%s[%d]", path, pre+i), old: item(a.Index(pre + i)), kind: removed}, secret)
		default:
			w.value(fmt.Sprintf("%s[%d]", path, pre+i), a.Index(pre+i), b.Index(pre+i), "", secret)
		}
	}
}

// mergeKeyField finds the struct field whose JSON name is the patch merge key.
func mergeKeyField(elem reflect.Type, mergeKey string) ([]int, bool) {
	if mergeKey == "" || elem.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range elem.NumField() {
		f := elem.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == mergeKey {
			return f.Index, true
		}
	}
	return nil, false
}

func (w *walker) maps(path string, a, b reflect.Value, secret bool) {
	keys := map[string]bool{}
	for _, m := range []reflect.Value{a, b} {
		if !m.IsValid() {
			continue
		}
		for _, k := range m.MapKeys() {
			keys[fmt.Sprint(k.Interface())] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	lookup := func(m reflect.Value, k string) (reflect.Value, bool) {
		if !m.IsValid() || m.Len() == 0 {
			return reflect.Value{}, false
		}
		v := m.MapIndex(reflect.ValueOf(k).Convert(m.Type().Key()))
		return v, v.IsValid()
	}
	for _, k := range sorted {
		sub := fmt.Sprintf("%s[%s]", path, k)
		av, aok := lookup(a, k)
		bv, bok := lookup(b, k)
		switch {
		case !aok:
			w.add(fieldChange{path: sub, kind: added}, secret)
		case !bok:
			w.add(fieldChange{path: sub, kind: removed}, secret)
		default:
			w.value(sub, av, bv, "", secret)
		}
	}
}

func leafString(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case resource.Quantity:
		return x.String()
	case intstr.IntOrString:
		return x.String()
	case metav1.Time:
		return x.UTC().Format("2006-01-02T15:04:05Z")
	}
	if v.Kind() == reflect.String { // also named types: UID, PullPolicy
		if v.Len() == 0 {
			return `""`
		}
		return v.String()
	}
	return fmt.Sprint(v.Interface())
}

// summarize renders at most limit changes, then "and N more".
func summarize(changes []fieldChange, limit int) string {
	if limit <= 0 {
		limit = len(changes)
	}
	parts := make([]string, 0, min(len(changes), limit)+1)
	for i, c := range changes {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-limit))
			break
		}
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}
