package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/agent"
)

// journalLine is one line of -o text: the reason and what follows "): ".
type journalLine struct{ reason, message string }

// journal parses the agent's stdout as -o text lines.
func (a *runningAgent) journal() []journalLine {
	var out []journalLine
	for l := range strings.Lines(a.out.String()) {
		f := strings.Fields(l)
		_, msg, ok := strings.Cut(l, "): ")
		if len(f) < 3 || !ok {
			a.t.Fatalf("stdout line is not an -o text line: %q", l)
		}
		out = append(out, journalLine{reason: f[2], message: strings.TrimSuffix(msg, "\n")})
	}
	return out
}

// waitLines polls stdout until n lines of reason hold substr, or fails at
// the deadline.
func (a *runningAgent) waitLines(n int, reason, substr string) {
	a.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := 0
		for _, l := range a.journal() {
			if l.reason == reason && strings.Contains(l.message, substr) {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%d %s lines containing %q within 5s, want %d; stdout:\n%s", got, reason, substr, n, a.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The journal (-o text, the default) shows each change, even one whose words
// repeat an earlier one, so that its last word on a pod is true: a manifest
// removed and put back ends on the ADD, an image edited, undone and redone
// on the redone image.
func TestJournalPrintsRepeatedChanges(t *testing.T) {
	dir := t.TempDir()
	const old, redone = "registry.k8s.io/etcd:3.6.15-0", "registry.k8s.io/etcd:3.6.16-0"
	a := startAgent(t, dir, func(o *agent.Options) { o.Output = "text" })
	a.waitFirstList()
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", old))
	a.waitLines(1, "StaticPodAdded", "etcd.yaml")

	if err := os.Remove(filepath.Join(dir, "etcd.yaml")); err != nil {
		t.Fatal(err)
	}
	a.waitLines(1, "StaticPodRemoved", "etcd.yaml")
	writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", old))
	a.waitLines(2, "StaticPodAdded", "etcd.yaml")

	for i, image := range []string{redone, old, redone} {
		writeByRename(t, dir, "etcd.yaml", manifestYAML("etcd", image))
		a.waitLines(i+1, "StaticPodUpdated", "")
	}

	var changes []string
	var last journalLine
	for _, l := range a.journal() {
		switch l.reason {
		case "StaticPodAdded", "StaticPodUpdated", "StaticPodRemoved":
			changes = append(changes, l.reason)
			last = l
		}
	}
	want := "StaticPodAdded StaticPodRemoved StaticPodAdded StaticPodUpdated StaticPodUpdated StaticPodUpdated"
	if got := strings.Join(changes, " "); got != want {
		t.Errorf("the journal's changes are %s, want %s; stdout:\n%s", got, want, a.out.String())
	}
	if !strings.Contains(last.message, "image 3.6.15-0 → 3.6.16-0") {
		t.Errorf("the journal's last word is %q, want the UPDATE to %s; stdout:\n%s", last.message, redone, a.out.String())
	}
}
