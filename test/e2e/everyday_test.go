package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The bounds an Event read at a glance keeps to, over the everyday edits
// below: the whole message, the median of them, and the fact before the
// first "; ".
const (
	everydayMaxBytes    = 300
	everydayMedianBytes = 150
	everydayFirstBytes  = 160
)

// everydayStats are the sizes of a run's messages in bytes.
type everydayStats struct {
	count, max, median, maxFirst int
	longest, longestFirst        string
}

func measureMessages(msgs []string) everydayStats {
	s := everydayStats{count: len(msgs)}
	sizes := make([]int, 0, len(msgs))
	for _, m := range msgs {
		sizes = append(sizes, len(m))
		if len(m) > s.max {
			s.max, s.longest = len(m), m
		}
		first, _, _ := strings.Cut(m, "; ")
		if len(first) > s.maxFirst {
			s.maxFirst, s.longestFirst = len(first), m
		}
	}
	if len(sizes) > 0 {
		slices.Sort(sizes)
		s.median = sizes[len(sizes)/2]
		if len(sizes)%2 == 0 {
			s.median = (sizes[len(sizes)/2-1] + sizes[len(sizes)/2]) / 2
		}
	}
	return s
}

// The edits a new user makes on a first day, with the tools they use: the
// examples copied in, a .bak made of the winning file, sed -i of the
// winning and of the shadowed file, a typo left and then fixed, the .bak
// removed. Every message podwatch prints for them is read at a glance: none
// is long, and each says its fact before the first "; ".
func TestEverydayEditsShortMessages(t *testing.T) {
	for _, tool := range []string{"cp", "sed", "rm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	dir := t.TempDir()
	a := startAgent(t, dir)
	a.waitFirstList() // the examples copied in are ADDs, not an inventory
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	step := 0
	settle := func() {
		t.Helper()
		step++
		a.settleWith(fmt.Sprintf("zz-step%d", step))
	}

	examples, err := filepath.Glob("../../examples/manifests/*.yaml")
	for i, e := range examples {
		if examples[i], err = filepath.Abs(e); err != nil {
			t.Fatal(err)
		}
	}
	if err != nil || len(examples) != 3 {
		t.Fatalf("examples: %v, %v", examples, err)
	}
	run(append(append([]string{"cp"}, examples...), ".")...)
	settle()
	const api = "kube-apiserver.yaml"
	run("cp", api, api+".bak") // the .bak sorts last: it wins
	settle()
	run("sed", "-i", "s/kube-apiserver:v1.37.2/kube-apiserver:v1.37.3/", api+".bak")
	settle()
	run("sed", "-i", "s/kube-apiserver:v1.37.2/kube-apiserver:v1.37.3/", api)
	settle()
	run("sed", "-i", "s/imagePullPolicy: IfNotPresent/imagePullPolicy: Sometimes/", "etcd.yaml")
	a.waitEvent("StaticPodRemoved", "etcd")
	settle()
	run("sed", "-i", "s/imagePullPolicy: Sometimes/imagePullPolicy: IfNotPresent/", "etcd.yaml")
	settle()
	run("rm", api+".bak")
	settle()

	// Every line printed: an Event counted again is printed again, and
	// read again.
	var msgs []string
	var list strings.Builder
	for _, ev := range a.out.events(t) {
		if strings.Contains(ev.Message, "zz-step") {
			continue
		}
		msgs = append(msgs, ev.Message)
		fmt.Fprintf(&list, "  %d %s: %s\n", len(ev.Message), ev.Reason, ev.Message)
	}
	s := measureMessages(msgs)
	t.Logf("%d messages: max %d bytes, median %d, longest first clause %d\n%s", s.count, s.max, s.median, s.maxFirst, list.String())
	if s.count < 8 {
		t.Errorf("%d messages, want at least the 3 ADDs, the .bak's UPDATE, 2 sed UPDATEs, the typo's InvalidManifest, REMOVE and ADD", s.count)
	}
	if s.max > everydayMaxBytes {
		t.Errorf("the longest message is %d bytes, want at most %d: %s", s.max, everydayMaxBytes, s.longest)
	}
	if s.median > everydayMedianBytes {
		t.Errorf("the median message is %d bytes, want at most %d", s.median, everydayMedianBytes)
	}
	if s.maxFirst > everydayFirstBytes {
		t.Errorf("the longest first clause is %d bytes, want at most %d: %s", s.maxFirst, everydayFirstBytes, s.longestFirst)
	}
}

// settleWith drops two invalid markers named after prefix, one after the
// other, and waits for each one's InvalidManifest: the first settles after
// every step before it, and the second's comes from a later step of the
// agent, so once it is out, every Event of those steps is too.
func (a *runningAgent) settleWith(prefix string) {
	a.t.Helper()
	for _, m := range []string{prefix + "a.yaml", prefix + "b.yaml"} {
		if err := os.WriteFile(filepath.Join(a.dir, m), []byte("kind: Pod\n"), 0o600); err != nil {
			a.t.Fatal(err)
		}
		a.waitEvent("InvalidManifest", m+" is invalid")
	}
}
