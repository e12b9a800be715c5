package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/agent"

	v1 "k8s.io/api/core/v1"
)

// Editor scripts (testdata/editors/*.txt) are the exact file-system steps of
// an editor or tool, one per line; '#' at the start of a line is a comment.
//
//	setup NAME REF              write NAME at start, after the first list
//	start                       start the agent (settle delay 1s), then setup
//	wait REASON SUBSTR...       poll until such an event is on stdout
//	write NAME REF              open(O_CREAT|O_TRUNC), one write, close
//	chunk NAME REF N PAUSE      open(O_CREAT|O_TRUNC); N times: pause, write 1/N; close
//	rename OLD NEW              rename(2)
//	remove NAME                 unlink(2)
//	symlink TARGET NAME         symlink(2); TARGET need not exist
//	pause DURATION              the editor's own think time (not synchronisation)
//	expect REASON SUBSTR...     one distinct Event (by name) after quiescence
//	maybe REASON SUBSTR...      an Event allowed, not required
//
// An expected SUBSTR may hold parts separated by " ... ": the message, or
// its detail (the podwatch.io/detail annotation, which says what the
// message leaves out), must hold each, in order. Where the kubelet's outcome is a race (whether its
// watch read a file that was gone a moment later), the script gives each
// outcome's expectations in a block, and the Events must be one of them:
//
//	either
//	expect ...                  one outcome
//	or
//	expect ...                  another
//	end
//
// REF is the content: "empty", "pod:NAME:IMAGE" (manifestYAML) or
// "text:GO-ESCAPED-STRING".
//
// After the last step the runner drops an invalid marker, zz-marker.yaml, and
// waits for its InvalidManifest: that is reported only after the settle
// delay, which started after every scripted step, so any bad news the steps
// left pending (REMOVE, InvalidManifest, DuplicatePod) has been reported by
// then. The Events seen (by name; the marker excluded) must then be exactly
// the expected ones, and ADD/UPDATE/REMOVE each exactly once (count 1): a
// transient REMOVE+ADD shows as a REMOVE or as an ADD with count 2.

type editorStep struct {
	line int
	op   string
	args []string
}

// containsInOrder says whether msg holds each part of substr (parts
// separated by " ... "), in that order.
func containsInOrder(msg, substr string) bool {
	for _, part := range strings.Split(substr, " ... ") {
		i := strings.Index(msg, part)
		if i < 0 {
			return false
		}
		msg = msg[i+len(part):]
	}
	return true
}

// editorExpect is an Event a script requires (expect) or allows (maybe):
// one the kubelet may or may not be told, depending on how the editor's
// events fall into podwatch's snapshots.
type editorExpect struct {
	reason, substr string
	maybe          bool
}

type editorScript struct {
	setup  [][2]string
	steps  []editorStep
	expect []editorExpect
	// alts are the either/or blocks: each block's branches are the
	// expectations of one outcome of a race, exactly one of which holds.
	alts [][][]editorExpect
}

// outcomes are the expectations of every combination of the branches.
func (s editorScript) outcomes() [][]editorExpect {
	out := [][]editorExpect{s.expect}
	for _, block := range s.alts {
		var next [][]editorExpect
		for _, o := range out {
			for _, branch := range block {
				next = append(next, append(slices.Clone(o), branch...))
			}
		}
		out = next
	}
	return out
}

func parseEditorScript(t *testing.T, path string) editorScript {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s editorScript
	started := false
	var block [][]editorExpect // the either/or block being read
	inBlock := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		op, args := fields[0], fields[1:]
		want := map[string]int{"setup": 2, "start": 0, "write": 2, "chunk": 4, "rename": 2, "remove": 1, "symlink": 2, "pause": 1}
		switch op {
		case "either", "or", "end":
			switch {
			case op == "either" && !inBlock:
				inBlock, block = true, [][]editorExpect{nil}
			case op == "or" && inBlock:
				block = append(block, nil)
			case op == "end" && inBlock && len(block) > 1:
				s.alts, inBlock = append(s.alts, block), false
			default:
				t.Fatalf("%s:%d: %s out of place (either, expects, or, expects, end)", path, n, op)
			}
			continue
		case "wait", "expect", "maybe":
			if len(args) < 2 {
				t.Fatalf("%s:%d: %s REASON SUBSTR", path, n, op)
			}
			if op != "wait" {
				// The substring is the rest of the line, spaces included.
				sub := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, op), " "+args[0]))
				e := editorExpect{args[0], sub, op == "maybe"}
				if inBlock {
					block[len(block)-1] = append(block[len(block)-1], e)
				} else {
					s.expect = append(s.expect, e)
				}
				continue
			}
		default:
			k, ok := want[op]
			if !ok || len(args) != k {
				t.Fatalf("%s:%d: bad step %q", path, n, line)
			}
		}
		switch op {
		case "setup":
			if started {
				t.Fatalf("%s:%d: setup after start", path, n)
			}
			s.setup = append(s.setup, [2]string{args[0], args[1]})
		case "start":
			started = true
			s.steps = append(s.steps, editorStep{n, op, args})
		case "wait":
			sub := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, op), " "+args[0]))
			s.steps = append(s.steps, editorStep{n, op, []string{args[0], sub}})
		default:
			if !started {
				t.Fatalf("%s:%d: %s before start", path, n, op)
			}
			s.steps = append(s.steps, editorStep{n, op, args})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if inBlock {
		t.Fatalf("%s: either without end", path)
	}
	if !started || len(s.expect) == 0 {
		t.Fatalf("%s: a script needs start and at least one expect", path)
	}
	return s
}

func editorContent(t *testing.T, ref string) []byte {
	t.Helper()
	switch {
	case ref == "empty":
		return nil
	case strings.HasPrefix(ref, "pod:"):
		name, image, ok := strings.Cut(strings.TrimPrefix(ref, "pod:"), ":")
		if !ok {
			t.Fatalf("content %q: want pod:NAME:IMAGE", ref)
		}
		return []byte(manifestYAML(name, image))
	case strings.HasPrefix(ref, "text:"):
		s, err := strconv.Unquote(`"` + strings.TrimPrefix(ref, "text:") + `"`)
		if err != nil {
			t.Fatalf("content %q: %v", ref, err)
		}
		return []byte(s)
	}
	t.Fatalf("unknown content %q", ref)
	return nil
}

// writeChunks writes data to name in n parts, pausing before each: the
// file stays open (and partly written) throughout.
func writeChunks(t *testing.T, path string, data []byte, n int, pause time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := (len(data) + n - 1) / n
	for i := 0; i < n; i++ {
		time.Sleep(pause) // the writer's own pace, not synchronisation
		lo, hi := min(i*size, len(data)), min((i+1)*size, len(data))
		if _, err := f.Write(data[lo:hi]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// runEditorStep runs st; setup is the script's, written at its start.
func runEditorStep(t *testing.T, a **runningAgent, dir string, setup [][2]string, st editorStep) {
	t.Helper()
	p := func(name string) string { return filepath.Join(dir, name) }
	var err error
	switch st.op {
	case "start":
		*a = startAgent(t, dir, editorSettle)
		// After the first list: the scripts mean the setup ADDed.
		(*a).waitFirstList()
		for _, f := range setup {
			writeByRename(t, dir, f[0], string(editorContent(t, f[1])))
		}
	case "wait":
		(*a).waitEvent(st.args[0], st.args[1])
	case "write":
		err = os.WriteFile(p(st.args[0]), editorContent(t, st.args[1]), 0o600)
	case "chunk":
		n, perr := strconv.Atoi(st.args[2])
		d, derr := time.ParseDuration(st.args[3])
		if perr != nil || derr != nil || n < 1 {
			t.Fatalf("line %d: chunk NAME REF N PAUSE", st.line)
		}
		writeChunks(t, p(st.args[0]), editorContent(t, st.args[1]), n, d)
	case "rename":
		err = os.Rename(p(st.args[0]), p(st.args[1]))
	case "remove":
		err = os.Remove(p(st.args[0]))
	case "symlink":
		err = os.Symlink(st.args[0], p(st.args[1]))
	case "pause":
		d, derr := time.ParseDuration(st.args[0])
		if derr != nil {
			t.Fatalf("line %d: %v", st.line, derr)
		}
		time.Sleep(d) // the editor's think time, part of the scenario
	}
	if err != nil {
		t.Fatalf("line %d: %s %v: %v", st.line, st.op, st.args, err)
	}
}

const markerName = "zz-marker.yaml"

// quiesce drops the invalid marker and waits for its settled InvalidManifest,
// then returns the distinct Events seen (latest occurrence per name), the
// marker's excluded.
func (a *runningAgent) quiesce() []v1.Event {
	a.t.Helper()
	// Two markers, one after the other: the first settles after every
	// scripted step, but the step that reports it may write other events
	// after its line; the second marker's event comes from a later step,
	// so once it is out, everything before it is too.
	for _, m := range []string{markerName, markerName + "2"} {
		if err := os.WriteFile(filepath.Join(a.dir, m), []byte("kind: Pod\n"), 0o600); err != nil {
			a.t.Fatal(err)
		}
		a.waitEvent("InvalidManifest", m+" is invalid")
	}
	var order []string
	byName := map[string]v1.Event{}
	for _, ev := range a.out.events(a.t) {
		if strings.Contains(ev.Message, markerName) {
			continue
		}
		if _, seen := byName[ev.Name]; !seen {
			order = append(order, ev.Name)
		}
		byName[ev.Name] = ev
	}
	out := make([]v1.Event, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out
}

// checkOneOf asserts evs are exactly one of the outcomes (see exactly).
func checkOneOf(t *testing.T, evs []v1.Event, outcomes [][]editorExpect) {
	t.Helper()
	var report []string
	for i, want := range outcomes {
		problems := exactly(evs, want)
		if len(problems) == 0 {
			return
		}
		report = append(report, fmt.Sprintf("outcome %d of %d:\n%s", i+1, len(outcomes), strings.Join(problems, "\n")))
	}
	t.Fatalf("%s\nevents:\n%s", strings.Join(report, "\n"), listEvents(evs))
}

// listEvents is evs a line each, for a failure message.
func listEvents(evs []v1.Event) string {
	var sb strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&sb, "  %s %s x%d: %s\n", ev.Type, ev.Reason, ev.Count, ev.Message)
	}
	return sb.String()
}

// exactly says how evs differ from want: each wanted Event once, nothing
// else, and every pod change counted once.
func exactly(evs []v1.Event, want []editorExpect) []string {
	var problems []string
	used := make([]bool, len(evs))
	for _, w := range want {
		found := false
		for i, ev := range evs {
			if !used[i] && ev.Reason == w.reason && (containsInOrder(ev.Message, w.substr) || containsInOrder(ev.Annotations["podwatch.io/detail"], w.substr)) {
				used[i], found = true, true
				break
			}
		}
		if !found && !w.maybe {
			problems = append(problems, fmt.Sprintf("missing: %s %q", w.reason, w.substr))
		}
	}
	for i, ev := range evs {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("unexpected: %s %s", ev.Reason, ev.Message))
		}
		switch ev.Reason {
		case "StaticPodAdded", "StaticPodUpdated", "StaticPodRemoved":
			if ev.Count != 1 {
				problems = append(problems, fmt.Sprintf("%s happened %d times: %s", ev.Reason, ev.Count, ev.Message))
			}
		}
	}
	return problems
}

func TestEditorsScripted(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "editors", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) < 6 {
		t.Fatalf("found %d editor scripts, want at least 6", len(scripts))
	}
	for _, path := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			t.Parallel()
			s := parseEditorScript(t, path)
			dir := t.TempDir()
			var a *runningAgent
			for _, st := range s.steps {
				runEditorStep(t, &a, dir, s.setup, st)
			}
			checkOneOf(t, a.quiesce(), s.outcomes())
		})
	}
}

// TestEditorRealSedInPlace runs the real sed -i: one UPDATE, which says
// the pod may restart once more before it, naming sed's temporary file
// (sedXXXXXX, no leading dot): whether the kubelet read that file before
// the rename (then it ran the pod from it, dropped it as the name went, and
// started it from x.yaml) is a race podwatch cannot see, so it never says
// two restarts for certain.
func TestEditorRealSedInPlace(t *testing.T) {
	sed, err := exec.LookPath("sed")
	if err != nil {
		t.Skip("no sed on PATH")
	}
	dir := t.TempDir()
	a := startAgent(t, dir, editorSettle)
	a.waitFirstList()
	writeByRename(t, dir, "x.yaml", manifestYAML("web", "nginx:1.28"))
	a.waitEvent("StaticPodAdded", "x.yaml")
	if out, err := exec.Command(sed, "-i", "s/nginx:1.28/nginx:1.29/", filepath.Join(dir, "x.yaml")).CombinedOutput(); err != nil {
		t.Fatalf("sed -i: %v: %s", err, out)
	}
	evs := a.quiesce()
	want := []editorExpect{
		{reason: "StaticPodAdded", substr: "x.yaml: the kubelet starts the pod (nginx:1.28)"},
		{reason: "StaticPodUpdated", substr: "x.yaml: image 1.28 → 1.29: the kubelet restarts the pod (new UID); may restart it once more first (sed's temp file)"},
	}
	if miss := exactly(evs, want); len(miss) > 0 {
		t.Fatalf("want one UPDATE that names sed's temporary file as a maybe:\n%s\nevents:\n%s", strings.Join(miss, "\n"), listEvents(evs))
	}
}

// editorSettle leaves the scripted writers' pauses (40 ms at most) far
// inside the settle delay, even on a loaded CI machine.
func editorSettle(o *agent.Options) { o.Source.SettleDelay = time.Second }
