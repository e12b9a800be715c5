package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real `go test -json` on a module with a passing, a failing and an
// unbuildable package.
func TestDigestOfARealRun(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": `package a
import "testing"
func TestA(t *testing.T) { t.Log("quiet-when-passing") }
`,
		"b/b_test.go": `package b
import "testing"
func TestB(t *testing.T) {
	t.Run("ok", func(t *testing.T) { t.Log("quiet-too") })
	t.Run("sub", func(t *testing.T) {
		for i := range 40 {
			t.Logf("noise %d", i)
		}
		t.Error("the-reason")
	})
}
`,
		"c/c_test.go": "package c\nimport \"testing\"\nfunc TestC(t *testing.T) { undefined() }\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs bytes.Buffer
	code := run([]string{"go", "-C", dir, "test", "-json", "-count=1", "./..."}, 5, nil, &out, &errs)
	if code != 1 {
		t.Errorf("exit status %d, want go test's 1; stderr:\n%s", code, errs.String())
	}
	got := out.String()
	for _, want := range []string{"ok  \texample.com/m/a", "--- FAIL: TestB/sub", "the-reason", "undefined: undefined"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"quiet-when-passing", "quiet-too", "=== RUN"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q, which plain go test leaves out:\n%s", unwanted, got)
		}
	}
	i := strings.Index(got, "\n=== 2 failed")
	if i < 0 {
		t.Fatalf("no digest of 2 failures (TestB/sub and c's build; TestB failed for its subtest alone):\n%s", got)
	}
	digest := got[i:]
	for _, want := range []string{"--- example.com/m/b TestB/sub\n", "the-reason", "--- example.com/m/c (build failed)", "undefined: undefined"} {
		if !strings.Contains(digest, want) {
			t.Errorf("digest lacks %q:\n%s", want, digest)
		}
	}
	if strings.Contains(digest, "--- example.com/m/b TestB\n") {
		t.Errorf("digest names TestB, which failed for its subtest alone:\n%s", digest)
	}
	if strings.Contains(digest, "noise 10") {
		t.Errorf("digest has more than the last 5 lines of TestB/sub:\n%s", digest)
	}
	lines := strings.Split(strings.TrimRight(digest, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "=== failed: ") || !strings.Contains(last, "TestB/sub") {
		t.Errorf("last line %q, want the failed tests named", last)
	}
}

// All passing: the command's status, and no digest; the kept stream has
// the passing test's log, which the output leaves out.
func TestNoDigestWhenAllPass(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"a/a_test.go": "package a\nimport \"testing\"\nfunc TestA(t *testing.T) { t.Log(\"kept-for-later\") }\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs, kept bytes.Buffer
	if code := run([]string{"go", "-C", dir, "test", "-json", "-count=1", "./..."}, 5, &kept, &out, &errs); code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s\n%s", code, errs.String(), out.String())
	}
	if strings.Contains(out.String(), "kept-for-later") || !strings.Contains(kept.String(), "kept-for-later") {
		t.Errorf("a passing test's log should be in the kept stream only; output:\n%s\nkept:\n%s", out.String(), kept.String())
	}
	if strings.Contains(out.String(), "failed") {
		t.Errorf("a digest when nothing failed:\n%s", out.String())
	}
}

// A command that is not there is an error, not a pass.
func TestMissingCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "nothing")}, 5, nil, &out, &errs); code == 0 {
		t.Error("exit status 0 for a command that does not exist")
	}
}
