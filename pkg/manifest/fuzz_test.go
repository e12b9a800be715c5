package manifest

import (
	"errors"
	"testing"
)

// FuzzDecode: any input yields a pod or a *Error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(withSpec(oneContainer)))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"a","image":"b"}]}}`))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"))
	f.Add([]byte("- 1\n- {a: b}\n"))
	f.Add([]byte(withSpec(oneContainer + "  ports: [{containerPort: 0x50, hostPort: 1e3}]\nvolumes: [{name: v}]")))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - <<: {name: a}\n    image: b\n---\n:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data, Options{NodeName: "node-1"})
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *Error: %v", err, err)
			}
			return
		}
		if p == nil || len(p.JSON) == 0 || p.Key == "" || p.Hash == "" {
			t.Fatalf("valid result incomplete: %+v", p)
		}
		if _, err := p.Object(); err != nil {
			t.Fatalf("valid result does not decode back: %v", err)
		}
	})
}

// FuzzTreeChangesNoVerdict: files above treeMax skip podwatch's positional
// tree, which must cost lines and remarks only. Every input is decoded with
// the tree and without it; the verdicts must agree.
func FuzzTreeChangesNoVerdict(f *testing.F) {
	f.Add([]byte(withSpec(oneContainer)))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"))
	f.Add([]byte(withSpec(oneContainer + "  args: [&x " + "aaaaaaaaaa" + ", *x, *x]")))
	f.Add([]byte(withSpec(oneContainer) + "---\nkind: Pod\n"))
	f.Add([]byte(withSpec("containers:\n- name: a\n  image: b\n  image: c\n")))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"a","image":"b"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		with, errWith := Decode(data, Options{NodeName: "node-1"})
		without, errWithout := Decode(data, Options{NodeName: "node-1", treeMax: 1})
		switch {
		case (errWith == nil) != (errWithout == nil):
			t.Fatalf("with the tree: %v; without: %v", errWith, errWithout)
		case errWith == nil && (with.Key != without.Key || with.Hash != without.Hash):
			t.Fatalf("with the tree %s %s, without %s %s", with.Key, with.Hash, without.Key, without.Hash)
		case errors.Is(errWith, ErrTooComplex) != errors.Is(errWithout, ErrTooComplex):
			t.Fatalf("alias verdicts differ: with the tree %v; without %v", errWith, errWithout)
		}
	})
}
