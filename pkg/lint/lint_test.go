package lint

import (
	"strings"
	"testing"
)

func TestLintLeftoverKind(t *testing.T) {
	tests := map[string]string{
		"kube-apiserver.yaml~":             "editor backup file",
		"etcd.yaml.1234.2025-01-02@03:04~": "editor backup file", // Ansible's backup=yes
		"#etcd.yaml#":                      "Emacs auto-save file",
		"4913":                             "vim's write test file",
		"sedAbc123":                        "sed -i temporary file",
		"sed0Zz9aQ":                        "sed -i temporary file",
		"etcd.yaml.BAK":                    "backup copy",
		"etcd.yaml.orig":                   "backup copy",
		"etcd.yaml.rej":                    "patch reject file",
		"etcd.yaml.swp":                    "vim swap file",
		"etcd.yaml.dpkg-old":               "package manager leftover",
		"etcd.yaml.dpkg-dist":              "package manager leftover",
		"etcd.yaml.ucf-dist":               "package manager leftover",
		"etcd.yaml.rpmnew":                 "package manager leftover",
		"etcd.yaml.rpmsave":                "package manager leftover",
		"etcd.yaml.tmp":                    "temporary file",
		// Meant as manifests, whatever the extension.
		"etcd.yaml":       "",
		"etcd.json":       "",
		"etcd":            "",
		"4913.yaml":       "",
		"sedAbc12":        "",
		"sedAbc1234":      "",
		"sed-abc12":       "",
		"#":               "",
		"##":              "",
		"backup.yaml":     "",
		"old-etcd.yaml":   "",
		"etcd.yaml.tmpl2": "",
	}
	for name, want := range tests {
		if got := leftoverKind(name); got != want {
			t.Errorf("leftoverKind(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLintOptionsRejected(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		opts  Options
		want  string
	}{
		{"no node", []string{"x"}, Options{}, "node name is empty"},
		{"bad node", []string{"x"}, Options{NodeName: "Node_1"}, `node name "node_1": a lowercase RFC 1123 subdomain`},
		{"skip an error", []string{"x"}, Options{NodeName: "n", Skip: []Code{CodeDuplicatePod}}, `cannot skip "duplicate-pod"`},
		{"skip unknown", []string{"x"}, Options{NodeName: "n", Skip: []Code{"typo"}}, `cannot skip "typo"`},
		{"no paths", nil, Options{NodeName: "n"}, "no path to check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Check(tt.paths, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, %v; want an error containing %q", r, err, tt.want)
			}
		})
	}
}

func TestLintResult(t *testing.T) {
	warn := Finding{File: "a", Severity: Warning, Code: CodeLeftover}
	bad := Finding{File: "a", Severity: Error, Code: CodeInvalidManifest}
	io := Finding{File: "b", Severity: Error, Code: CodeIOError}
	tests := []struct {
		name     string
		strict   bool
		findings []Finding
		want     Result
	}{
		{"nothing", false, nil, Pass},
		{"warnings pass", false, []Finding{warn}, Pass},
		{"strict warnings fail", true, []Finding{warn}, Fail},
		{"errors fail", false, []Finding{warn, bad}, Fail},
		// A file never read may be the broken one: incomplete beats fail.
		{"io beats fail", true, []Finding{bad, io}, Incomplete},
	}
	for _, tt := range tests {
		r := &Report{Strict: tt.strict, Findings: tt.findings}
		if got := r.Result(); got != tt.want {
			t.Errorf("%s: Result = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestLintSortFindings(t *testing.T) {
	fs := []Finding{
		{File: "b", Line: 1, Code: CodeIgnoredContent},
		{File: "a", Line: 3, Code: CodeIgnoredContent},
		{File: "a", Code: CodeDuplicatePod},
		{File: "a", Code: CodePermissions, Message: "mode"},
		{File: "a", Code: CodeLeftover},
		{File: "a", Code: CodePermissions, Message: "owner"},
	}
	sortFindings(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.File+" "+string(f.Code)+" "+f.Message)
	}
	want := []string{
		"a leftover-file ",
		"a permissions mode",
		"a permissions owner",
		"a duplicate-pod ",
		"a ignored-content ",
		"b ignored-content ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sorted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The kubelet lowercases and trims its node name; so does check, rather
// than reject a name the kubelet would run with.
func TestLintNodeNameAsTheKubeletDerivesIt(t *testing.T) {
	r, err := Check([]string{t.TempDir()}, Options{NodeName: " CP1 "})
	if err != nil {
		t.Fatal(err)
	}
	if r.NodeName != "cp1" {
		t.Fatalf("report node %q, want cp1", r.NodeName)
	}
}
