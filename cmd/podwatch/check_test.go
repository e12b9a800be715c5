//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// checkTree copies testdata/check to a temporary directory with modes set
// explicitly: git keeps no modes but the executable bit, and the umask of
// the checkout must not decide what the permission checks see.
func checkTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/check")); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// owned is the warning a file owned by the test's user gets; none when the
// tests run as root, as in CI.
func owned(path string, dir bool) string {
	uid := os.Getuid()
	if uid == 0 {
		return ""
	}
	what := "change what the kubelet runs as root"
	if dir {
		what = "add or replace manifests, which the kubelet runs as root"
	}
	return fmt.Sprintf("%s: warning: owned by uid %d, not root, who can %s: chown root:root", path, uid, what)
}

// lines drops the empty strings owned returns as root.
func lines(ls ...string) []string {
	return slices.DeleteFunc(ls, func(s string) bool { return s == "" })
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// runCheckIn runs check on paths relative to root and returns its output
// with root taken out, so findings read as in the scenario directories. A
// run that blocks (on a FIFO, say) fails rather than hangs the suite.
func runCheckIn(t *testing.T, root string, args []string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- runCheck(args, &out, &errOut) }()
	select {
	case code = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("podwatch check %q blocked", args)
	}
	strip := func(s string) string { return strings.ReplaceAll(s, root+"/", "") }
	return code, strip(out.String()), strip(errOut.String())
}

func TestCheckScenarios(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		paths   []string // relative to the copy of testdata/check
		setup   func(t *testing.T, root string)
		want    []string // stdout lines
		summary string
		code    int
	}{
		{
			name:    "valid directory: dot names and subdirectories are not read",
			paths:   []string{"valid"},
			summary: "2 files checked: 0 errors, 0 warnings",
			code:    0,
		},
		{
			name:  "invalid manifests",
			paths: []string{"invalid"},
			want: []string{
				"invalid/kube-controller-manager.yaml:9: error: yaml: mapping values are not allowed in this context",
				`invalid/kube-scheduler.yaml:7: error: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
			},
			summary: "3 files checked: 2 errors, 0 warnings",
			code:    1,
		},
		{
			name:  "duplicate pod: the .bak sorts last and wins",
			paths: []string{"duplicate"},
			want: []string{
				`duplicate/kube-apiserver.yaml: error: pod "kube-system/kube-apiserver-node1" is also defined by kube-apiserver.yaml.bak, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts`,
				`duplicate/kube-apiserver.yaml.bak: warning: backup copy: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`,
			},
			summary: "3 files checked: 1 error, 1 warning",
			code:    1,
		},
		{
			name:  "editor and tool leftovers",
			paths: []string{"leftovers"},
			want: []string{
				`leftovers/4913: warning: vim's write test file: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`,
				`leftovers/4913: error: kind: Required value: a static pod manifest needs "kind: Pod"`,
				`leftovers/etcd.yaml: error: pod "kube-system/etcd-node1" is also defined by sedAbc123, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts`,
				`leftovers/kube-apiserver.yaml: error: pod "kube-system/kube-apiserver-node1" is also defined by kube-apiserver.yaml~, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts; both define the same pod today`,
				`leftovers/kube-apiserver.yaml~: warning: editor backup file: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`,
				`leftovers/sedAbc123: warning: sed -i temporary file: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`,
			},
			summary: "5 files checked: 3 errors, 3 warnings",
			code:    1,
		},
		{
			name:    "a leftover name given as the path is the manifest itself",
			paths:   []string{"leftovers/kube-apiserver.yaml~"},
			summary: "1 file checked: 0 errors, 0 warnings",
			code:    0,
		},
		{
			name:  "ignored content is a warning",
			paths: []string{"ignored"},
			want: []string{
				`ignored/kube-apiserver.yaml:11: warning: silently ignored: unknown field "spec.containers[0].imagePullpolicy" (field names are case-sensitive: did you mean "imagePullPolicy"?)`,
				`ignored/kube-apiserver.yaml:14: warning: silently ignored: duplicate key "spec.hostNetwork": only the last occurrence is used`,
				`ignored/kube-apiserver.yaml:15: warning: silently ignored: second YAML document: only the first document of a file is read`,
			},
			summary: "1 file checked: 0 errors, 3 warnings",
			code:    0,
		},
		{
			name:  "ignored content fails with --strict",
			flags: []string{"--strict"},
			paths: []string{"ignored/kube-apiserver.yaml"},
			want: []string{
				`ignored/kube-apiserver.yaml:11: warning: silently ignored: unknown field "spec.containers[0].imagePullpolicy" (field names are case-sensitive: did you mean "imagePullPolicy"?)`,
				`ignored/kube-apiserver.yaml:14: warning: silently ignored: duplicate key "spec.hostNetwork": only the last occurrence is used`,
				`ignored/kube-apiserver.yaml:15: warning: silently ignored: second YAML document: only the first document of a file is read`,
			},
			summary: "1 file checked: 0 errors, 3 warnings",
			code:    1,
		},
		{
			name:    "--skip leaves warnings out",
			flags:   []string{"--strict", "--skip", "ignored-content,leftover-file"},
			paths:   []string{"ignored", "duplicate/kube-apiserver.yaml.bak"},
			summary: "2 files checked: 0 errors, 0 warnings",
			code:    0,
		},
		{
			name:  "a FIFO in the directory is skipped, never opened",
			paths: []string{"valid"},
			setup: func(t *testing.T, root string) { mkfifo(t, filepath.Join(root, "valid", "kube-proxy.yaml")) },
			want: []string{
				"valid/kube-proxy.yaml: warning: named pipe (FIFO), not a regular file: the kubelet skips it",
			},
			summary: "2 files checked: 0 errors, 1 warning",
			code:    0,
		},
		{
			name:  "a FIFO as the path is an I/O error",
			paths: []string{"valid/pipe"},
			setup: func(t *testing.T, root string) { mkfifo(t, filepath.Join(root, "valid", "pipe")) },
			want: []string{
				"valid/pipe: error: named pipe (FIFO): neither a directory nor a regular file",
			},
			summary: "0 files checked: 1 error, 0 warnings (incomplete: some paths could not be read)",
			code:    2,
		},
		{
			name:  "a missing path is an I/O error, the others are still checked",
			paths: []string{"invalid/kube-scheduler.yaml", "missing"},
			want: []string{
				`invalid/kube-scheduler.yaml:7: error: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
				"missing: error: stat: no such file or directory",
			},
			summary: "1 file checked: 2 errors, 0 warnings (incomplete: some paths could not be read)",
			code:    2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := checkTree(t)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			// Permissions depend on who runs the test; they have their own test.
			args := append([]string{"--node-name", "node1", "--skip=permissions"}, tt.flags...)
			for _, p := range tt.paths {
				args = append(args, filepath.Join(root, p))
			}
			code, stdout, stderr := runCheckIn(t, root, args)
			if got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); stdout == "" && len(tt.want) > 0 || stdout != "" && !slices.Equal(got, tt.want) {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, strings.Join(tt.want, "\n"))
			}
			if stderr != tt.summary+"\n" {
				t.Errorf("stderr = %q, want %q", stderr, tt.summary+"\n")
			}
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
		})
	}
}

func TestCheckPermissions(t *testing.T) {
	root := checkTree(t)
	dir := filepath.Join(root, "permissions")
	for p, mode := range map[string]fs.FileMode{dir: 0o775, filepath.Join(dir, "kube-apiserver.yaml"): 0o664, filepath.Join(dir, "etcd.yaml"): 0o600} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	want := lines(
		"permissions: warning: mode 0775 lets the group add or replace manifests, which the kubelet runs as root: chmod go-w",
		owned("permissions", true),
		owned("permissions/etcd.yaml", false),
		"permissions/kube-apiserver.yaml: warning: mode 0664 lets the group change what the kubelet runs as root: chmod go-w",
		owned("permissions/kube-apiserver.yaml", false),
	)
	for _, strict := range []bool{false, true} {
		code, stdout, stderr := runCheckIn(t, root, []string{"--node-name=node1", fmt.Sprintf("--strict=%t", strict), dir})
		if got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); !slices.Equal(got, want) {
			t.Errorf("strict=%t: stdout:\n%s\nwant:\n%s", strict, stdout, strings.Join(want, "\n"))
		}
		if wantSum := fmt.Sprintf("2 files checked: 0 errors, %d warnings\n", len(want)); stderr != wantSum {
			t.Errorf("strict=%t: stderr = %q, want %q", strict, stderr, wantSum)
		}
		if wantCode := map[bool]int{false: 0, true: 1}[strict]; code != wantCode {
			t.Errorf("strict=%t: exit code = %d, want %d", strict, code, wantCode)
		}
	}
}

func TestCheckNeverPrintsSecrets(t *testing.T) {
	root := checkTree(t)
	for _, format := range []string{"text", "json"} {
		_, stdout, stderr := runCheckIn(t, root, []string{"--node-name=node1", "-o", format, filepath.Join(root, "invalid")})
		if strings.Contains(stdout+stderr, "s3cr3t") {
			t.Errorf("-o %s printed the env value:\n%s%s", format, stdout, stderr)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	root := checkTree(t)
	code, stdout, _ := runCheckIn(t, root, []string{"--node-name=node1", "--output", "json", "--skip=permissions",
		filepath.Join(root, "duplicate"), filepath.Join(root, "invalid")})
	if code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
	var doc struct {
		NodeName string
		Strict   bool
		Result   string
		Checked  int
		Errors   int
		Warnings int
		Files    []struct {
			File, Verdict, Pod, ShadowedBy string
		}
		Findings []struct {
			File, Severity, Code, Message string
			Line                          int
		}
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout)
	}
	if doc.NodeName != "node1" || doc.Result != "fail" || doc.Checked != 6 || doc.Errors != 3 || doc.Warnings != 1 {
		t.Errorf("summary = %+v", doc)
	}
	var codes []string
	for _, f := range doc.Findings {
		codes = append(codes, fmt.Sprintf("%s:%d:%s:%s", f.File, f.Line, f.Severity, f.Code))
	}
	wantCodes := []string{
		"duplicate/kube-apiserver.yaml:0:error:duplicate-pod",
		"duplicate/kube-apiserver.yaml.bak:0:warning:leftover-file",
		"invalid/kube-controller-manager.yaml:9:error:invalid-manifest",
		"invalid/kube-scheduler.yaml:7:error:invalid-manifest",
	}
	if !slices.Equal(codes, wantCodes) {
		t.Errorf("findings = %q, want %q", codes, wantCodes)
	}
	var verdicts []string
	for _, f := range doc.Files {
		verdicts = append(verdicts, fmt.Sprintf("%s %s %s %s", f.File, f.Verdict, f.Pod, f.ShadowedBy))
	}
	wantVerdicts := []string{
		"duplicate/etcd.yaml valid kube-system/etcd-node1 ",
		"duplicate/kube-apiserver.yaml shadowed kube-system/kube-apiserver-node1 duplicate/kube-apiserver.yaml.bak",
		"duplicate/kube-apiserver.yaml.bak valid kube-system/kube-apiserver-node1 ",
		"invalid/etcd.yaml valid kube-system/etcd-node1 ",
		"invalid/kube-controller-manager.yaml invalid  ",
		"invalid/kube-scheduler.yaml invalid  ",
	}
	if !slices.Equal(verdicts, wantVerdicts) {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(verdicts, "\n"), strings.Join(wantVerdicts, "\n"))
	}
}

func TestCheckNodeNameDefault(t *testing.T) {
	t.Setenv("NODE_NAME", "worker-7")
	root := checkTree(t)
	_, stdout, _ := runCheckIn(t, root, []string{"-o", "json", filepath.Join(root, "valid", "etcd.yaml")})
	if !strings.Contains(stdout, `"pod": "kube-system/etcd-worker-7"`) {
		t.Errorf("want the pod named after $NODE_NAME:\n%s", stdout)
	}
}

func TestCheckUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // prefix
		stderr string // first line
	}{
		{"help", []string{"--help"}, 0, "podwatch check lints static pod manifests", ""},
		{"short help", []string{"-h"}, 0, "podwatch check lints static pod manifests", ""},
		{"no path", []string{"--node-name=n"}, 2, "", "podwatch check: no PATH given"},
		{"unknown flag", []string{"--recursive", "x"}, 2, "", "podwatch check: unknown flag: --recursive"},
		{"bad output", []string{"-o", "yaml", "x"}, 2, "", `podwatch check: --output "yaml": want text or json`},
		{"empty node name", []string{"--node-name=", "x"}, 2, "", "podwatch check: --node-name is empty and neither $NODE_NAME nor the hostname gave one"},
		{"invalid node name", []string{"--node-name=Node_1", "x"}, 2, "",
			`podwatch check: node name "node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"skip an error code", []string{"--node-name=n", "--skip=invalid-manifest", "x"}, 2, "",
			`podwatch check: cannot skip "invalid-manifest": only ignored-content, leftover-file, not-regular, permissions can be skipped`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runCheck(tt.args, &out, &errOut)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
			if !strings.HasPrefix(out.String(), tt.stdout) || tt.stdout == "" && out.Len() > 0 {
				t.Errorf("stdout = %q, want it to start with %q", out.String(), tt.stdout)
			}
			if first, _, _ := strings.Cut(errOut.String(), "\n"); first != tt.stderr {
				t.Errorf("stderr = %q, want first line %q", errOut.String(), tt.stderr)
			}
		})
	}
}

// The example folders say what the README says they show: examples/manifests
// is clean, examples/problems holds each problem podwatch exists for.
func TestExamples(t *testing.T) {
	code, stdout, stderr := runCheckIn(t, "../..", []string{"--node-name=node-1", "--skip=permissions", "../../examples/manifests"})
	if code != 0 || stdout != "" || !strings.Contains(stderr, "3 files checked: 0 errors, 0 warnings") {
		t.Errorf("examples/manifests: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCheckIn(t, "../..", []string{"--node-name=node-1", "--skip=permissions", "../../examples/problems"})
	want := lines(
		`examples/problems/etcd.yaml:17: warning: silently ignored: unknown field "spec.containers[0].imagePullPolicyy"`,
		`examples/problems/kube-apiserver.yaml: error: pod "kube-system/kube-apiserver-node-1" is also defined by kube-apiserver.yaml.bak, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts`,
		`examples/problems/kube-apiserver.yaml.bak: warning: backup copy: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`,
		`examples/problems/kube-scheduler.yaml:12: error: spec.restartPolicy: Unsupported value: "always": supported values: "Always", "OnFailure", "Never"`,
	)
	if got := strings.Split(strings.TrimSpace(stdout), "\n"); code != 1 || !slices.Equal(got, want) {
		t.Errorf("examples/problems: exit %d, findings:\n%s\nwant:\n%s", code, stdout, strings.Join(want, "\n"))
	}
}
