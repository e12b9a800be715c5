//go:build unix

package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/podwatch/podwatch/pkg/manifestfs"

	"github.com/podwatch/podwatch/pkg/manifest"
)

func pod(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: %s\n", name, image)
}

// writeDir creates the files with mode 0644 whatever the umask.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// check runs Check without the owner warnings, which depend on who runs the
// test, and returns the findings as "name:line: severity: code: message" with
// dir taken out, and the verdicts as "name verdict pod".
func check(t *testing.T, dir string, opts Options, paths ...string) (findings, verdicts []string, r *Report) {
	t.Helper()
	if opts.NodeName == "" {
		opts.NodeName = "node1"
	}
	if len(paths) == 0 {
		paths = []string{dir}
	}
	r, err := Check(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, dir), "/") }
	for _, f := range r.Findings {
		if f.Code == CodePermissions && strings.HasPrefix(f.Message, "owned by") {
			continue
		}
		findings = append(findings, fmt.Sprintf("%s:%d: %s: %s: %s", rel(f.File), f.Line, f.Severity, f.Code, f.Message))
	}
	for _, f := range r.Files {
		verdicts = append(verdicts, strings.TrimSpace(fmt.Sprintf("%s %s %s", rel(f.Path), f.Verdict, f.Pod)))
	}
	return findings, verdicts, r
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLintDuplicatesLastWins(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"a.yaml":   pod("web", "nginx:1"),
		"b.yaml":   pod("web", "nginx:2"),
		"c.yaml":   pod("web", "nginx:1"),
		"d.yaml":   "kind: Pod\n", // invalid files define no pod
		"z.yaml":   pod("web", "nginx:3") + "  restartPolicy: Sometimes\n",
		".y.yaml":  pod("web", "nginx:4"), // never read
		"sub/e.ym": pod("web", "nginx:5"), // never read
	})
	findings, verdicts, r := check(t, dir, Options{})
	equal(t, "findings", findings, []string{
		`a.yaml:0: error: duplicate-pod: pod "default/web-node1" is also defined by c.yaml, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts; both define the same pod today`,
		`b.yaml:0: error: duplicate-pod: pod "default/web-node1" is also defined by c.yaml, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts`,
		`d.yaml:1: error: invalid-manifest: apiVersion: Required value: a static pod manifest needs "apiVersion: v1"`,
		`z.yaml:9: error: invalid-manifest: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
	})
	equal(t, "verdicts", verdicts, []string{
		"a.yaml shadowed default/web-node1",
		"b.yaml shadowed default/web-node1",
		"c.yaml valid default/web-node1",
		"d.yaml invalid",
		"sub skipped",
		"z.yaml invalid",
	})
	if r.Files[0].ShadowedBy != filepath.Join(dir, "c.yaml") {
		t.Errorf("ShadowedBy = %q", r.Files[0].ShadowedBy)
	}
	if r.Checked() != 5 || r.Result() != Fail {
		t.Errorf("Checked = %d, Result = %s; want 5, fail", r.Checked(), r.Result())
	}
}

func TestLintDuplicatesNeedTheSameNode(t *testing.T) {
	// Names are compared after the node suffix: the same file checked for
	// another node is another pod, but two files are still one pod.
	dir := writeDir(t, map[string]string{"a.yaml": pod("web", "nginx:1"), "b.yaml": pod("web", "nginx:1")})
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	// Two paths are two kubelets: no duplicate across them.
	findings, _, _ := check(t, dir, Options{}, a, b)
	equal(t, "findings across paths", findings, nil)
	// The same path twice is checked once.
	_, verdicts, _ := check(t, dir, Options{}, dir, dir+"/")
	equal(t, "verdicts", verdicts, []string{"a.yaml shadowed default/web-node1", "b.yaml valid default/web-node1"})
}

func TestLintLeftoversOnlyInDirectories(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"web.yaml.disabled": pod("web", "nginx:1"),
		"#web.yaml#":        pod("other", "nginx:1"),
	})
	findings, _, _ := check(t, dir, Options{})
	equal(t, "findings", findings, []string{
		`#web.yaml#:0: warning: leftover-file: Emacs auto-save file: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`,
		`web.yaml.disabled:0: warning: leftover-file: renamed to disable it? The kubelet reads every file whose name does not start with "." as a manifest: move it out of the directory to stop the pod`,
	})
	findings, _, _ = check(t, dir, Options{}, filepath.Join(dir, "web.yaml.disabled"))
	equal(t, "findings for the file itself", findings, nil)
}

func TestLintPermissions(t *testing.T) {
	dir := writeDir(t, map[string]string{"a.yaml": pod("a", "x:1"), "b.yaml": pod("b", "x:1"), "c.yaml": pod("c", "x:1"), "d.yaml": pod("d", "x:1")})
	for name, mode := range map[string]os.FileMode{"a.yaml": 0o600, "b.yaml": 0o664, "c.yaml": 0o646, "d.yaml": 0o666, ".": 0o1777} {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	findings, _, r := check(t, dir, Options{})
	equal(t, "findings", findings, []string{
		":0: warning: permissions: mode 0777 lets the group and others add or replace manifests, which the kubelet runs as root: chmod go-w",
		"b.yaml:0: warning: permissions: mode 0664 lets the group change what the kubelet runs as root: chmod go-w",
		"c.yaml:0: warning: permissions: mode 0646 lets others change what the kubelet runs as root: chmod go-w",
		"d.yaml:0: warning: permissions: mode 0666 lets the group and others change what the kubelet runs as root: chmod go-w",
	})
	if r.Result() != Pass {
		t.Errorf("Result = %s, want pass: permissions are warnings", r.Result())
	}
	if os.Getuid() != 0 {
		owner := 0
		for _, f := range r.Findings {
			if strings.HasPrefix(f.Message, fmt.Sprintf("owned by uid %d, not root", os.Getuid())) {
				owner++
			}
		}
		if owner != 5 {
			t.Errorf("want an owner warning for the directory and each file, got %d:\n%v", owner, r.Findings)
		}
	}
	findings, _, _ = check(t, dir, Options{Skip: []Code{CodePermissions}})
	equal(t, "findings skipped", findings, nil)
}

func TestLintEntriesThatAreNotFiles(t *testing.T) {
	dir := writeDir(t, map[string]string{"real.yaml": pod("web", "nginx:1")})
	for _, l := range [][2]string{
		{"real.yaml", "link.yaml"},        // followed, as the kubelet's os.Stat does
		{"missing.yaml", "dangling.yaml"}, // the kubelet's stat fails
		{"loop.yaml", "loop.yaml"},        // ELOOP
		{".", "dirlink"},                  // a directory: not entered
		{"/dev/null", "devnull.yaml"},     // a device: never opened
	} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	findings, verdicts, r := check(t, dir, Options{})
	equal(t, "findings", findings, []string{
		`dangling.yaml:0: warning: not-regular: broken symlink: the kubelet cannot stat it and skips it`,
		`devnull.yaml:0: warning: not-regular: character device, not a regular file: the kubelet skips it`,
		`fifo.yaml:0: warning: not-regular: named pipe (FIFO), not a regular file: the kubelet skips it`,
		`link.yaml:0: error: duplicate-pod: pod "default/web-node1" is also defined by real.yaml, which wins at every relist (the kubelet keeps the file that sorts last); but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version until its next relist brings the winner back: two restarts; both define the same pod today`,
		`loop.yaml:0: warning: not-regular: broken symlink: the kubelet cannot stat it and skips it`,
	})
	equal(t, "verdicts", verdicts, []string{
		"dangling.yaml skipped",
		"devnull.yaml skipped",
		"dirlink skipped",
		"fifo.yaml skipped",
		"link.yaml shadowed default/web-node1",
		"loop.yaml skipped",
		"real.yaml valid default/web-node1",
	})
	if r.Checked() != 2 {
		t.Errorf("Checked = %d, want 2", r.Checked())
	}
}

func TestLintPathErrors(t *testing.T) {
	dir := writeDir(t, nil)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	findings, verdicts, r := check(t, dir, Options{}, filepath.Join(dir, "missing"), fifo)
	equal(t, "findings", findings, []string{
		"fifo:0: error: io-error: named pipe (FIFO): neither a directory nor a regular file",
		"missing:0: error: io-error: stat: no such file or directory",
	})
	equal(t, "verdicts", verdicts, nil)
	if r.Result() != Incomplete {
		t.Errorf("Result = %s, want incomplete", r.Result())
	}
}

func TestLintUnreadable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads anything")
	}
	dir := writeDir(t, map[string]string{"secret.yaml": pod("web", "x:1"), "sub/a.yaml": pod("a", "x:1")})
	if err := os.Chmod(filepath.Join(dir, "secret.yaml"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "sub"), 0o311); err != nil {
		t.Fatal(err)
	}
	// Runs before TempDir's removal, which needs to list sub.
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "sub"), 0o755) })
	findings, verdicts, r := check(t, dir, Options{Skip: []Code{CodePermissions}}, dir, filepath.Join(dir, "sub"))
	equal(t, "findings", findings, []string{
		"secret.yaml:0: error: io-error: cannot read: open: permission denied",
		"sub:0: error: io-error: open: permission denied",
	})
	equal(t, "verdicts", verdicts, []string{"secret.yaml unreadable", "sub skipped"})
	if r.Result() != Incomplete {
		t.Errorf("Result = %s, want incomplete", r.Result())
	}
}

func TestLintTooLarge(t *testing.T) {
	dir := writeDir(t, map[string]string{"big.yaml": pod("web", "x:1")})
	big := filepath.Join(dir, "big.yaml")
	// Sparse: the size decides, nothing needs reading.
	if err := os.Truncate(big, manifest.MaxSize); err != nil {
		t.Fatal(err)
	}
	findings, _, _ := check(t, dir, Options{})
	equal(t, "findings", findings, []string{"big.yaml:0: error: invalid-manifest: manifest: file is 10 MiB or larger"})

	// A file that grew after the stat is too large when read.
	if _, err := manifestfs.ReadManifest(big); err == nil || !strings.Contains(err.Error(), "10 MiB") {
		t.Errorf("readManifest = %v, want too large", err)
	}
	if err := os.Truncate(big, manifest.MaxSize-1); err != nil {
		t.Fatal(err)
	}
	if data, err := manifestfs.ReadManifest(big); err != nil || len(data) != manifest.MaxSize-1 {
		t.Errorf("readManifest = %d bytes, %v; want %d bytes", len(data), err, manifest.MaxSize-1)
	}
}

func TestLintTooComplex(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for c, prev := 'b', 'a'; c <= 'i'; c, prev = c+1, c {
		fmt.Fprintf(&b, "    %c: &%c [%s]\n", c, c, strings.TrimSuffix(strings.Repeat("*"+string(prev)+",", 9), ","))
	}
	b.WriteString("spec:\n  containers:\n  - name: c\n    image: x:1\n")
	dir := writeDir(t, map[string]string{"bomb.yaml": b.String()})
	findings, verdicts, r := check(t, dir, Options{})
	if len(findings) != 1 || !strings.Contains(findings[0], ": error: too-complex: ") || !strings.Contains(findings[0], "podwatch refuses to expand it") {
		t.Errorf("findings = %q", findings)
	}
	equal(t, "verdicts", verdicts, []string{"bomb.yaml unchecked"})
	if r.Result() != Fail {
		t.Errorf("Result = %s, want fail", r.Result())
	}
}

func TestLintIgnoredContentAndStrict(t *testing.T) {
	dir := writeDir(t, map[string]string{"web.yaml": pod("web", "x:1") + "    imagePullPolicyy: Always\n"})
	findings, _, r := check(t, dir, Options{Strict: true})
	equal(t, "findings", findings, []string{`web.yaml:9: warning: ignored-content: silently ignored: unknown field "spec.containers[0].imagePullPolicyy"`})
	if r.Result() != Fail {
		t.Errorf("Result = %s, want fail with Strict", r.Result())
	}
}
