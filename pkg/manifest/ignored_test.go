package manifest

import (
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

func TestIgnored(t *testing.T) {
	tests := []struct {
		name, data string
		want       []types.Ignored
	}{
		{"unknown container field", withSpec(oneContainer + "  imagePullPolicyy: Always"),
			[]types.Ignored{{Line: 9, What: `unknown field "spec.containers[0].imagePullPolicyy"`}}},
		{"wrong case", withSpec(oneContainer + "HostNetwork: true"),
			[]types.Ignored{{Line: 9, What: `unknown field "spec.HostNetwork" (field names are case-sensitive: did you mean "hostNetwork"?)`}}},
		{"unknown top-level field", "extra: 1\n" + withSpec(oneContainer),
			[]types.Ignored{{Line: 1, What: `unknown field "extra"`}}},
		{"duplicate key", withSpec("restartPolicy: Never\nrestartPolicy: Always\n" + oneContainer),
			[]types.Ignored{{Line: 7, What: `duplicate key "spec.restartPolicy": only the last occurrence is used`}}},
		{"duplicate nested key", withSpec("containers:\n- name: app\n  image: a\n  image: nginx"),
			[]types.Ignored{{Line: 9, What: `duplicate key "spec.containers[0].image": only the last occurrence is used`}}},
		{"second document", withSpec(oneContainer) + "---\nkind: Pod\n",
			[]types.Ignored{{Line: 9, What: "second YAML document: only the first document of a file is read"}}},
		{"json duplicate key", `{"apiVersion":"v1","kind":"Pod",
"metadata":{"name":"a"},
"metadata":{"name":"web"},
"spec":{"containers":[{"name":"app","image":"nginx","bogus":1}]}}`,
			[]types.Ignored{{Line: 3, What: `duplicate key "metadata": only the last occurrence is used`}, {Line: 4, What: `unknown field "spec.containers[0].bogus"`}}},
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
