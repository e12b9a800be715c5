package manifest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
)

const testNode = "node-1"

// header is the five lines every manifest built by withSpec starts with, so
// spec content starts on line 6.
const header = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n"

// withSpec builds a manifest from spec lines written without indentation.
func withSpec(spec string) string {
	var b strings.Builder
	b.WriteString(header)
	for _, l := range strings.Split(strings.TrimSuffix(spec, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// oneContainer is a valid single-container spec.
const oneContainer = "containers:\n- name: app\n  image: nginx:1.27\n"

func mustDecode(t *testing.T, data string) *types.Pod {
	t.Helper()
	p, err := Decode([]byte(data), Options{NodeName: testNode})
	if err != nil {
		t.Fatalf("Decode: unexpected error: %v\nmanifest:\n%s", err, data)
	}
	return p
}

func mustFail(t *testing.T, data string) *Error {
	t.Helper()
	p, err := Decode([]byte(data), Options{NodeName: testNode})
	if err == nil {
		t.Fatalf("Decode: expected an error, got pod %s\nmanifest:\n%s", p.Key, data)
	}
	var me *Error
	if !errors.As(err, &me) {
		t.Fatalf("Decode: error %T does not unwrap to *Error: %v", err, err)
	}
	return me
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustObject decodes a valid result's canonical encoding.
func mustObject(t *testing.T, p *types.Pod) *v1.Pod {
	t.Helper()
	pod, err := p.Object()
	if err != nil {
		t.Fatal(err)
	}
	return pod
}
