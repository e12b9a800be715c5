package manifest

import (
	"errors"
	"strings"
	"testing"
)

// longArg is a valid manifest past treeMax through one long argument, so
// that tests under -race do not spend their time validating labels.
func longArg(arg string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: b\n    args: [\"" +
		arg + strings.Repeat("x", treeMax) + "\"]\n"
}

// Above treeMax podwatch skips its positional tree; the verdict stays the
// kubelet's, only lines and remarks go.
func TestLargeFileDecodesWithoutTree(t *testing.T) {
	data := longArg("")
	if len(data) <= treeMax {
		t.Fatalf("test file is %d bytes, want over treeMax", len(data))
	}
	p := mustDecode(t, data)
	if p.Key != "default/web-node-1" {
		t.Errorf("Key = %q", p.Key)
	}

	// A bad field is still named, at no line.
	_, err := Decode([]byte(strings.Replace(data, "image: b", "image: \"\"", 1)), Options{NodeName: testNode})
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "spec.containers[0].image") || e.Line != 0 {
		t.Fatalf("err = %#v, want the image field named without a line", err)
	}

	// A second document goes unremarked above treeMax; below it, it is noted.
	p = mustDecode(t, data+"---\nkind: Pod\n")
	if len(p.Ignored) != 0 {
		t.Errorf("Ignored = %+v, want none above treeMax", p.Ignored)
	}
}

// A quoted "*" makes a large file take the alias check, which must accept
// it when nothing expands.
func TestLargeFileWithStarIsChecked(t *testing.T) {
	data := longArg("--glob=*.yaml")
	p := mustDecode(t, data)
	if got := mustObject(t, p).Spec.Containers[0].Args; len(got) != 1 || !strings.HasPrefix(got[0], "--glob=*.yaml") {
		t.Errorf("args = %.40q", got)
	}
}

// Both ways of measuring alias expansion refuse a bomb: the tree below
// treeMax, the bare count above it.
func TestAliasBombRefusedEitherSideOfTreeMax(t *testing.T) {
	for name, data := range map[string]string{
		"small file": aliased(200<<10, 150), // 29 MiB expanded
		"large file": aliased(1200<<10, 25), // 29 MiB expanded
	} {
		small := len(data) <= treeMax
		if small != (name == "small file") {
			t.Fatalf("%s: %d bytes is on the wrong side of treeMax", name, len(data))
		}
		if _, err := Decode([]byte(data), Options{NodeName: testNode}); !errors.Is(err, ErrTooComplex) {
			t.Errorf("%s: err = %v, want ErrTooComplex", name, err)
		}
	}
	// Just under the cap passes through the bare count too. The tree's
	// count accepts alias-small.yaml in the corpus, and
	// BenchmarkDecodePeakHeap decodes a 19 MiB expansion on each side.
	if _, err := Decode([]byte(aliased(1100<<10, 17)), Options{NodeName: testNode}); err != nil {
		t.Errorf("a large file expanding under the cap: %v", err)
	}
}

func TestManyFieldErrorsListFew(t *testing.T) {
	_, err := Decode([]byte(manyLabels(1000, `"v*"`)), Options{NodeName: testNode})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if n := strings.Count(e.Msg, "metadata.labels: Invalid value"); n != maxListedErrors {
		t.Errorf("%d errors spelled out, want %d", n, maxListedErrors)
	}
	if !strings.HasSuffix(e.Msg, "; and 995 more errors") {
		t.Errorf("message does not say how many more: ...%s", e.Msg[max(0, len(e.Msg)-80):])
	}
	if e.Line != 5 {
		t.Errorf("Line = %d, want 5 (labels:)", e.Line)
	}
}

// A large file the alias check cannot parse goes on to the kubelet's own
// conversion, which names the syntax error.
func TestLargeFileWithStarAndSyntaxError(t *testing.T) {
	data := longArg("*") + "  bad: [unclosed\n"
	_, err := Decode([]byte(data), Options{NodeName: testNode})
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "yaml") || errors.Is(err, ErrTooComplex) {
		t.Fatalf("err = %v, want the YAML syntax error", err)
	}
}
