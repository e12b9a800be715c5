package manifest

import (
	"strings"
	"testing"
)

func TestIgnored(t *testing.T) {
	tests := []struct {
		name, data string
		want       []Ignored
	}{
		{"unknown container field", withSpec(oneContainer + "  imagePullPolicyy: Always"),
			[]Ignored{{9, `unknown field "spec.containers[0].imagePullPolicyy"`}}},
		{"wrong case", withSpec(oneContainer + "HostNetwork: true"),
			[]Ignored{{9, `unknown field "spec.HostNetwork" (field names are case-sensitive: did you mean "hostNetwork"?)`}}},
		{"unknown top-level field", "extra: 1\n" + withSpec(oneContainer),
			[]Ignored{{1, `unknown field "extra"`}}},
		{"duplicate key", withSpec("restartPolicy: Never\nrestartPolicy: Always\n" + oneContainer),
			[]Ignored{{7, `duplicate key "spec.restartPolicy": only the last occurrence is used`}}},
		{"duplicate nested key", withSpec("containers:\n- name: app\n  image: a\n  image: nginx"),
			[]Ignored{{9, `duplicate key "spec.containers[0].image": only the last occurrence is used`}}},
		{"second document", withSpec(oneContainer) + "---\nkind: Pod\n",
			[]Ignored{{9, "second YAML document: only the first document of a file is read"}}},
		{"json duplicate key", `{"apiVersion":"v1","kind":"Pod",
"metadata":{"name":"a"},
"metadata":{"name":"web"},
"spec":{"containers":[{"name":"app","image":"nginx","bogus":1}]}}`,
			[]Ignored{{3, `duplicate key "metadata": only the last occurrence is used`}, {4, `unknown field "spec.containers[0].bogus"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustDecode(t, tt.data)
			if len(p.Ignored) != len(tt.want) {
				t.Fatalf("Ignored = %+v, want %+v", p.Ignored, tt.want)
			}
			for i := range tt.want {
				if p.Ignored[i] != tt.want[i] {
					t.Errorf("Ignored[%d] = %+v, want %+v", i, p.Ignored[i], tt.want[i])
				}
			}
		})
	}
}

func TestMergeKeysAreNotDuplicates(t *testing.T) {
	p := mustDecode(t, withSpec(`containers:
- &c
  name: a
  image: nginx
- <<: *c
  name: b
`))
	if len(p.Ignored) != 0 {
		t.Errorf("Ignored = %+v, want none", p.Ignored)
	}
}

func TestIgnoredHasNoValues(t *testing.T) {
	p := mustDecode(t, withSpec(oneContainer+"  envv:\n  - name: TOKEN\n    value: s3cr3t-value"))
	for _, ig := range p.Ignored {
		if strings.Contains(ig.What, "s3cr3t") {
			t.Errorf("Ignored echoes a value: %q", ig.What)
		}
	}
}
