package differential

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// archive is a scenario whose fixtures one and two are one-line files.
func archive(script string) []byte {
	return []byte(script + "-- one --\ncontent of one\n-- two --\ncontent of two\n")
}

func TestParseSplitsAtStart(t *testing.T) {
	sc, err := Parse("s", archive(`# comment
write one as a.yaml
known-disagreement:  a reason
start

rename a.yaml b.yaml
settle
write two as .b.yaml.tmp
rename .b.yaml.tmp b.yaml
remove b.yaml
relist
`))
	if err != nil {
		t.Fatal(err)
	}
	ops := func(steps []Step) string {
		var out []string
		for _, s := range steps {
			out = append(out, fmt.Sprintf("%d:%s%v", s.Line, s.Op, s.Args))
		}
		return strings.Join(out, " ")
	}
	if got, want := ops(sc.Setup), "2:write[a.yaml one]"; got != want {
		t.Errorf("setup = %s, want %s", got, want)
	}
	if got, want := ops(sc.Steps), "6:rename[a.yaml b.yaml] 7:settle[] 8:write[.b.yaml.tmp two] 9:rename[.b.yaml.tmp b.yaml] 10:remove[b.yaml] 11:relist[]"; got != want {
		t.Errorf("steps = %s, want %s", got, want)
	}
	if sc.KnownDisagreement != "a reason" {
		t.Errorf("known disagreement = %q", sc.KnownDisagreement)
	}
	if string(sc.Fixtures["two"]) != "content of two\n" || len(sc.Fixtures) != 2 {
		t.Errorf("fixtures = %q", sc.Fixtures)
	}
}

func TestParseWithoutStartWatchesFromTheFirstStep(t *testing.T) {
	sc, err := Parse("s", archive("write one as a.yaml\nsettle\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Setup) != 0 || len(sc.Steps) != 2 {
		t.Fatalf("setup %v, steps %v", sc.Setup, sc.Steps)
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"write one as a.yaml\nfrobnicate\nsettle\n", `line 2: unknown step "frobnicate"`},
		{"frob: x\nwrite one as a.yaml\nsettle\n", `line 1: unknown line "frob: x"`},
		// A step this harness does not know fails even beside one it
		// leaves to the real kubelet: it is not skipped unread.
		{"sed s/a/b/ a.yaml\nfrobnicate\nsettle\n", `line 2: unknown step "frobnicate"`},
		{"write one a.yaml\nsettle\n", "line 1: bad step"},
		{"write one as\nsettle\n", "line 1: bad step"},
		{"write one as a.yaml\nsettle x\n", "line 2: bad step"},
		{"write missing as a.yaml\nsettle\n", `line 1: no fixture "missing"`},
		{"write one as ../a.yaml\nsettle\n", "want a file name in the folder"},
		{"write one as a.yaml\nrename a.yaml ..\nsettle\n", "want a file name in the folder"},
		{"remove !harness-m000.yaml\nsettle\n", "sorts after !harness-"},
		{"write one as !a.yaml\nsettle\n", "sorts after !harness-"},
		{"write one as a.yaml\nsettle\nremove a.yaml\n", "line 3: the last step must be settle or relist"},
		{"write one as a.yaml\nsettle\nstart\nsettle\n", "line 2: settle before start"},
		{"start\nstart\nsettle\n", "line 2: start twice"},
		{"# nothing\n", "no steps"},
		{"known-disagreement: a\nknown-disagreement: b\nwrite one as a.yaml\nsettle\n", "line 2: one known-disagreement"},
		{"known-disagreement:\nwrite one as a.yaml\nsettle\n", "line 1: one known-disagreement"},
	} {
		_, err := Parse("s", archive(tc.script))
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrKubeletOnly) {
			t.Errorf("%q: err = %v, want %q", tc.script, err, tc.want)
		}
	}
}

// A scenario with a step or line that only the real kubelet plays is told
// apart from a malformed one, and says what it has.
func TestParseLeavesKubeletOnlyScenarios(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"write one as a.yaml\nsettle\nsed s/1/2/ a.yaml\nsettle\n", "sed"},
		{"runs: 20\noutcome: x\noutcome: y\nwrite one as a.yaml\nsettle\n", "outcome:, runs:"},
		{"kubelet: own\nwrite one as a.yaml\nsettle\nremove-folder\nmake-folder\nsettle\n", "kubelet:, make-folder, remove-folder"},
		{"write one as a.yaml\nchmod 0600 a.yaml\nsettle\n", "chmod"},
	} {
		_, err := Parse("s", archive(tc.script))
		if !errors.Is(err, ErrKubeletOnly) || !strings.HasSuffix(err.Error(), ": "+tc.want) {
			t.Errorf("%q: err = %v, want ErrKubeletOnly naming %s", tc.script, err, tc.want)
		}
	}
}

// Every scenario file reads, without the kubelet: a malformed one, or one
// of the real kubelet's with a step neither suite's list names here, fails
// where TestDifferential would take longer to say so.
func TestScenariosLoad(t *testing.T) {
	for _, p := range loadScenarios(t) {
		if len(p.sc.Fixtures) == 0 {
			t.Errorf("%s: no fixtures", p.path)
		}
	}
}

func TestKubeletVerdictsReadUIDs(t *testing.T) {
	r := &Result{Phases: 4, Kubelet: []Op{
		{Phase: 0, Pod: "ns/a", Op: "ADD", UID: "1"},
		{Phase: 1, Pod: "ns/a", Op: "REMOVE", UID: "1"},
		{Phase: 1, Pod: "ns/b", Op: "ADD", UID: "9"},
		{Phase: 1, Pod: "ns/a", Op: "ADD", UID: "2"},
		{Phase: 2, Pod: "ns/a", Op: "RECONCILE", UID: "2"},
		{Phase: 2, Pod: "ns/a", Op: "UPDATE", UID: "2"},
		{Phase: 3, Pod: "ns/a", Op: "REMOVE", UID: "2"},
		{Phase: 3, Pod: "ns/b", Op: "DELETE", UID: "9"},
	}}
	want := Verdicts{
		"ns/a": {{Appears}, {Restarts}, {Updated}, {Goes}, nil},
		"ns/b": {nil, {Appears}, nil, {Deleted}, nil},
	}
	if got := KubeletVerdicts(r); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPodwatchVerdictsReadUpdates(t *testing.T) {
	r := &Result{Phases: 3, Podwatch: []Op{
		{Phase: 0, Pod: "ns/a", Op: "ADD"},
		{Phase: 1, Pod: "ns/a", Op: "UPDATE"},
		{Phase: 1, Pod: "ns/a", Op: "UPDATE", InPlace: true},
		{Phase: 2, Pod: "ns/a", Op: "REMOVE"},
		{Phase: 2, Pod: "ns/a", Op: "ADD"},
		{Phase: 3, Pod: "ns/a", Op: "REMOVE"},
	}}
	want := Verdicts{"ns/a": {{Appears}, {Restarts, Updated}, {Restarts}, {Goes}}}
	if got := PodwatchVerdicts(r); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestVerdictsEqual(t *testing.T) {
	base := Verdicts{"p": {nil, {Appears}, {Restarts}}}
	for _, tc := range []struct {
		name  string
		other Verdicts
		equal bool
	}{
		{"same", Verdicts{"p": {{}, {Appears}, {Restarts}}}, true},
		{"shorter, empty tail", Verdicts{"p": {nil, {Appears}, {Restarts}, nil}}, true},
		{"one phase late", Verdicts{"p": {nil, {Appears}, nil, {Restarts}}}, false},
		{"missed restart", Verdicts{"p": {nil, {Appears}}}, false},
		{"another pod", Verdicts{"p": {nil, {Appears}, {Restarts}}, "q": {{Appears}}}, false},
		{"nothing", Verdicts{}, false},
	} {
		if got := base.Equal(tc.other); got != tc.equal {
			t.Errorf("%s: Equal = %v", tc.name, got)
		}
		if got := tc.other.Equal(base); got != tc.equal {
			t.Errorf("%s, swapped: Equal = %v", tc.name, got)
		}
	}
}

// A phase ends with the batch that holds its closing marker, whatever else
// that batch holds; the markers that only open a round close nothing.
func TestPhasedCutsAtClosingMarkers(t *testing.T) {
	op := func(pod string) Op { return Op{Pod: pod} }
	batches := []batch{
		{ops: []Op{op("a")}},
		{markers: []string{"m000"}},
		{ops: []Op{op("b")}, markers: []string{"m001"}},
		{ops: []Op{op("c")}},
		{markers: []string{"m002", "m003"}},
		{ops: []Op{op("d")}},
	}
	var got []string
	for _, o := range phased(batches, []string{"m001", "m003"}) {
		got = append(got, fmt.Sprintf("%s%d", o.Pod, o.Phase))
	}
	if want := "a0 b0 c1 d2"; strings.Join(got, " ") != want {
		t.Errorf("phases = %v, want %s", got, want)
	}
}

func TestFormatPairDropsEmptyEnds(t *testing.T) {
	kube := Verdicts{"default/web-node-1": {nil, {Appears}, {Goes, Appears}, nil}}
	pw := Verdicts{"default/web-node-1": {nil, {Appears}, nil, nil}}
	k, p := FormatPair(kube, pw, 3, "node-1")
	if k != "default/web: add | remove, add" || p != "default/web: add | -" {
		t.Errorf("got %q and %q", k, p)
	}
	k, p = FormatPair(Verdicts{"x/a": {{Appears}, nil}}, Verdicts{}, 1, "node-1")
	if k != "x/a: add" || p != "(nothing)" {
		t.Errorf("got %q and %q", k, p)
	}
}
