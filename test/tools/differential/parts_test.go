package differential

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func fixtures(names ...string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		for _, n := range names {
			if n == name {
				return []byte("content of " + name), nil
			}
		}
		return nil, os.ErrNotExist
	}
}

func TestParseSplitsAtStart(t *testing.T) {
	sc, err := Parse("s", []byte(`# comment
install a.yaml one
known-disagreement:  a reason
start

rename a.yaml b.yaml
settle
write b.yaml two
remove b.yaml
relist
`), fixtures("one", "two"))
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
	if got, want := ops(sc.Setup), "2:install[a.yaml one]"; got != want {
		t.Errorf("setup = %s, want %s", got, want)
	}
	if got, want := ops(sc.Steps), "6:rename[a.yaml b.yaml] 7:settle[] 8:write[b.yaml two] 9:remove[b.yaml] 10:relist[]"; got != want {
		t.Errorf("steps = %s, want %s", got, want)
	}
	if sc.KnownDisagreement != "a reason" {
		t.Errorf("known disagreement = %q", sc.KnownDisagreement)
	}
	if string(sc.Fixtures["two"]) != "content of two" || len(sc.Fixtures) != 2 {
		t.Errorf("fixtures = %q", sc.Fixtures)
	}
}

func TestParseWithoutStartWatchesFromTheFirstStep(t *testing.T) {
	sc, err := Parse("s", []byte("install a.yaml one\nsettle\n"), fixtures("one"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Setup) != 0 || len(sc.Steps) != 2 {
		t.Fatalf("setup %v, steps %v", sc.Setup, sc.Steps)
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"install a.yaml one\nfrobnicate\nsettle\n", `line 2: bad step "frobnicate"`},
		{"install a.yaml\nsettle\n", "line 1: bad step"},
		{"install a.yaml one\nsettle x\n", "line 2: bad step"},
		{"install a.yaml missing\nsettle\n", "line 1: fixture missing"},
		{"install ../a.yaml one\nsettle\n", "want a plain file name"},
		{"install .a.yaml one\nsettle\n", "want a plain file name"},
		{"remove 00-harness-m000.yaml\nsettle\n", "want a plain file name"},
		{"install a.yaml one\nsettle\nremove a.yaml\n", "line 3: the last step must be settle or relist"},
		{"install a.yaml one\nsettle\nstart\nsettle\n", "line 2: settle before start"},
		{"start\nstart\nsettle\n", "line 2: start twice"},
		{"# nothing\n", "no steps"},
		{"known-disagreement: a\nknown-disagreement: b\ninstall a.yaml one\nsettle\n", "line 2: one known-disagreement"},
		{"known-disagreement:\ninstall a.yaml one\nsettle\n", "line 1: one known-disagreement"},
	} {
		_, err := Parse("s", []byte(tc.script), fixtures("one"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.script, err, tc.want)
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
