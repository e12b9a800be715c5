package diff

import (
	"fmt"
	"reflect"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// podVariants hands out one *types.Pod per variant (a key, an image, a
// pinned uid, a restyle, ignored content), so that equal variants share a
// pointer as the source's unchanged files do.
type podVariants map[string]*types.Pod

func (vs podVariants) get(key, image string, uid, restyle, ignored bool) *types.Pod {
	id := fmt.Sprint(key, image, uid, restyle, ignored)
	if vs[id] == nil {
		p := pod(key, image, func(p *v1.Pod) {
			if uid {
				p.UID = ktypes.UID("u-" + key)
			}
		})
		if restyle {
			p = restyled(p)
		}
		if ignored {
			p.Ignored = []types.Ignored{{Line: 3, What: `unknown field "spec.foo"`}}
		}
		vs[id] = p
	}
	return vs[id]
}

func sameState(a, b State) bool {
	norm := func(s State) State {
		if len(s.Pods) == 0 {
			s.Pods = nil
		}
		if len(s.Pending) == 0 {
			s.Pending = nil
		}
		if len(s.Reported) == 0 {
			s.Reported = nil
		}
		return s
	}
	return equalEmpty(reflect.ValueOf(norm(a)), reflect.ValueOf(norm(b)))
}

// equalEmpty is reflect.DeepEqual but for a nil slice or map, which
// equals an empty one: a state copied for Compute and one kept in place
// by Advance may hold either, which no step tells apart.
func equalEmpty(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || a.Pointer() == b.Pointer() {
			return a.IsNil() == b.IsNil()
		}
		return equalEmpty(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalEmpty(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalEmpty(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !equalEmpty(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalEmpty(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil()
	}
	return a.Equal(b)
}
