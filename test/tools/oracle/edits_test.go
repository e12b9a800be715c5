package oracle

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The edit mutator changes a manifest the way people edit one: it writes
// out or drops empty lists and maps, respells quantities quoted and
// unquoted, reorders keys, writes defaults out, and changes how the
// namespace is spelt. Each edit keeps the manifest meaning the same to a
// reader; whether the kubelet restarts the pod is for its UIDs to say.

// listFields and mapFields are where people write [] and {}.
var (
	containerLists = []string{"args", "command", "env", "envFrom", "ports", "volumeMounts", "volumeDevices"}
	specLists      = []string{"tolerations", "volumes", "imagePullSecrets", "hostAliases", "initContainers", "readinessGates"}
	containerMaps  = []string{"securityContext"}
	specMaps       = []string{"nodeSelector", "securityContext", "overhead"}
	metaMaps       = []string{"annotations", "labels"}
)

// defaults are values people write out although the kubelet would fill
// them in (or, for the static-pod ones, adds itself after hashing).
var (
	specDefaults = [][2]string{
		{"restartPolicy", "Always"}, {"dnsPolicy", "ClusterFirst"}, {"terminationGracePeriodSeconds", "30"},
		{"schedulerName", "default-scheduler"}, {"enableServiceLinks", "true"}, {"hostNetwork", "false"},
		{"nodeName", nodeName}, {"priority", "0"},
	}
	containerDefaults = [][2]string{
		{"terminationMessagePath", "/dev/termination-log"}, {"terminationMessagePolicy", "File"},
		{"imagePullPolicy", "IfNotPresent"}, {"imagePullPolicy", "Always"}, {"stdin", "false"}, {"tty", "false"},
	}
)

type editor struct {
	root *yaml.Node // the document's mapping
	rng  *rand.Rand
	done []string // what was edited, for the failure message
}

func newEditor(data []byte, rng *rand.Rand) (*editor, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	return &editor{root: doc.Content[0], rng: rng}, true
}

func (e *editor) bytes() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(e.root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func (e *editor) spec() *yaml.Node { return get(e.root, "spec") }

func (e *editor) containers() []*yaml.Node {
	var out []*yaml.Node
	for _, k := range []string{"containers", "initContainers"} {
		if l := get(e.spec(), k); l != nil && l.Kind == yaml.SequenceNode {
			out = append(out, l.Content...)
		}
	}
	return out
}

func (e *editor) pick(n int) int { return e.rng.IntN(n) }

func emptySeq() *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
}
func emptyMap() *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
}

// addEmpty writes [] or {} where the field is absent.
func (e *editor) addEmpty() bool {
	var where *yaml.Node
	var key string
	var v *yaml.Node
	switch cs := e.containers(); e.pick(5) {
	case 0:
		if len(cs) == 0 {
			return false
		}
		where, key, v = cs[e.pick(len(cs))], containerLists[e.pick(len(containerLists))], emptySeq()
	case 1:
		where, key, v = e.spec(), specLists[e.pick(len(specLists))], emptySeq()
	case 2:
		if len(cs) == 0 {
			return false
		}
		where, key, v = cs[e.pick(len(cs))], containerMaps[e.pick(len(containerMaps))], emptyMap()
	case 3:
		where, key, v = e.spec(), specMaps[e.pick(len(specMaps))], emptyMap()
	default:
		where, key, v = get(e.root, "metadata"), metaMaps[e.pick(len(metaMaps))], emptyMap()
	}
	if where == nil || where.Kind != yaml.MappingNode || get(where, key) != nil {
		return false
	}
	set(where, key, v)
	e.done = append(e.done, "add empty "+key)
	return true
}

// dropEmpty removes one key whose value is an empty list or map.
func (e *editor) dropEmpty() bool {
	type slot struct {
		m *yaml.Node
		i int
	}
	var slots []slot
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				v := n.Content[i+1]
				if (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode) && len(v.Content) == 0 {
					slots = append(slots, slot{n, i})
				}
				walk(v)
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(e.root)
	if len(slots) == 0 {
		return false
	}
	s := slots[e.pick(len(slots))]
	e.done = append(e.done, "drop empty "+s.m.Content[s.i].Value)
	s.m.Content = append(s.m.Content[:s.i:s.i], s.m.Content[s.i+2:]...)
	return true
}

// respell writes one resource quantity another way with the same value.
func (e *editor) respell() bool {
	var qs []*yaml.Node
	for _, c := range e.containers() {
		for _, k := range []string{"limits", "requests"} {
			if l := get(get(c, "resources"), k); l != nil && l.Kind == yaml.MappingNode {
				for i := 1; i < len(l.Content); i += 2 {
					if l.Content[i].Kind == yaml.ScalarNode {
						qs = append(qs, l.Content[i])
					}
				}
			}
		}
	}
	if len(qs) == 0 {
		return false
	}
	n := qs[e.pick(len(qs))]
	q, err := resource.ParseQuantity(n.Value)
	if err != nil {
		return false
	}
	var spellings []string
	spellings = append(spellings, q.String(), strconv.FormatInt(q.MilliValue(), 10)+"m")
	if q.MilliValue()%1000 == 0 {
		v := q.Value()
		spellings = append(spellings, strconv.FormatInt(v, 10), strconv.FormatInt(v, 10)+".0", "0"+strconv.FormatInt(v, 10))
		if v%1000 == 0 && v > 0 {
			spellings = append(spellings, strconv.FormatInt(v/1000, 10)+"k")
		}
		if v%1000000 == 0 && v > 0 {
			spellings = append(spellings, strconv.FormatInt(v/1000000, 10)+"M")
		}
		if v%(1<<20) == 0 && v > 0 {
			spellings = append(spellings, strconv.FormatInt(v>>20, 10)+"Mi")
		}
	}
	s := spellings[e.pick(len(spellings))]
	style := yaml.Style(0)
	if e.pick(2) == 0 {
		style = yaml.DoubleQuotedStyle
	}
	e.done = append(e.done, fmt.Sprintf("respell %q as %q (quoted %v)", n.Value, s, style != 0))
	n.Value, n.Tag, n.Style = s, "", style
	if style != 0 {
		n.Tag = "!!str"
	}
	return true
}

// reorder moves one mapping's first key to the end.
func (e *editor) reorder() bool {
	var maps []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && len(n.Content) >= 4 {
			maps = append(maps, n)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(e.root)
	if len(maps) == 0 {
		return false
	}
	m := maps[e.pick(len(maps))]
	m.Content = append(m.Content[2:], m.Content[0], m.Content[1])
	e.done = append(e.done, "reorder a mapping")
	return true
}

// writeDefault writes out a value the kubelet fills in or adds.
func (e *editor) writeDefault() bool {
	var where *yaml.Node
	var kv [2]string
	switch cs := e.containers(); e.pick(4) {
	case 0:
		where, kv = e.spec(), specDefaults[e.pick(len(specDefaults))]
	case 1:
		if len(cs) == 0 {
			return false
		}
		where, kv = cs[e.pick(len(cs))], containerDefaults[e.pick(len(containerDefaults))]
	case 2:
		where, kv = get(e.root, "metadata"), [2]string{"namespace", "default"}
	default:
		spec := e.spec()
		if spec == nil || get(spec, "tolerations") != nil {
			return false
		}
		tol := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		set(tol, "operator", &yaml.Node{Kind: yaml.ScalarNode, Value: "Exists"})
		set(tol, "effect", &yaml.Node{Kind: yaml.ScalarNode, Value: "NoExecute"})
		set(spec, "tolerations", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{tol}})
		e.done = append(e.done, "write the NoExecute toleration")
		return true
	}
	if where == nil || where.Kind != yaml.MappingNode || get(where, kv[0]) != nil {
		return false
	}
	set(where, kv[0], &yaml.Node{Kind: yaml.ScalarNode, Value: kv[1]})
	e.done = append(e.done, "write "+kv[0]+": "+kv[1])
	return true
}

// respellNamespace quotes, unquotes, drops or writes the namespace.
func (e *editor) respellNamespace() bool {
	meta := get(e.root, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return false
	}
	ns := get(meta, "namespace")
	switch {
	case ns == nil:
		set(meta, "namespace", &yaml.Node{Kind: yaml.ScalarNode, Value: "default", Style: yaml.DoubleQuotedStyle})
		e.done = append(e.done, `write namespace: "default"`)
	case ns.Kind == yaml.ScalarNode && e.pick(2) == 0:
		if ns.Style == 0 {
			ns.Style = yaml.SingleQuotedStyle
		} else {
			ns.Style = 0
		}
		e.done = append(e.done, "requote the namespace")
	default:
		for i := 0; i+1 < len(meta.Content); i += 2 {
			if meta.Content[i].Value == "namespace" {
				meta.Content = append(meta.Content[:i:i], meta.Content[i+2:]...)
				break
			}
		}
		e.done = append(e.done, "drop the namespace")
	}
	return true
}

func (e *editor) edit() bool {
	switch e.pick(6) {
	case 0:
		return e.addEmpty()
	case 1:
		return e.dropEmpty()
	case 2:
		return e.respell()
	case 3:
		return e.reorder()
	case 4:
		return e.writeDefault()
	default:
		return e.respellNamespace()
	}
}

// editSeeds are the manifests edits start from: the first version of each
// edit pair and the corpus's valid cases.
func editSeeds(t testing.TB) [][]byte {
	t.Helper()
	var seeds [][]byte
	for _, name := range pairNames(t) {
		a, _ := readPair(t, name)
		seeds = append(seeds, a)
	}
	for _, c := range loadExpectations(t).Cases {
		if c.Verdict == "valid" && c.Generate == nil && c.Divergence == "" {
			seeds = append(seeds, c.content(t))
		}
	}
	return seeds
}

// judgeEdit compares the kubelet's restart verdict on (a, b) with
// podwatch's. Pairs the kubelet rejects on either side say nothing about
// restarts (FuzzDifferential covers verdicts) and are skipped.
func judgeEdit(t *testing.T, a, b []byte, what []string) (judged bool) {
	t.Helper()
	va := DecodeAt("web.yaml", pairPath, a, nodeName)
	vb := DecodeAt("web.yaml", pairPath, b, nodeName)
	if !va.Valid || !vb.Valid || va.Key != vb.Key {
		return false
	}
	kube := va.Pod.UID != vb.Pod.UID
	pw, err := podwatchRestarts(a, b, nodeName)
	if err != nil {
		t.Fatalf("podwatch rejects what the kubelet takes: %v\nedits: %s\nbefore:\n%s\nafter:\n%s", err, strings.Join(what, "; "), a, b)
	}
	if pw != kube {
		t.Fatalf("restart: kubelet %v, podwatch %v\nedits: %s\nbefore:\n%s\nafter:\n%s", kube, pw, strings.Join(what, "; "), a, b)
	}
	return true
}

// mutate applies up to n edits to data.
func mutate(data []byte, rng *rand.Rand, n int) ([]byte, []string, bool) {
	e, ok := newEditor(data, rng)
	if !ok {
		return nil, nil, false
	}
	for range n {
		e.edit()
	}
	if len(e.done) == 0 {
		return nil, nil, false
	}
	out, err := e.bytes()
	if err != nil {
		return nil, nil, false
	}
	return out, e.done, true
}

// editRuns is how many edited pairs TestEditsRestartAsTheKubelet judges;
// PODWATCH_EDIT_RUNS raises it for a longer session.
func editRuns(t *testing.T) int {
	if s := os.Getenv("PODWATCH_EDIT_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("PODWATCH_EDIT_RUNS=%q: %v", s, err)
		}
		return n
	}
	return 3000
}

// TestEditsRestartAsTheKubelet edits every seed at random (a fixed seed per
// run number, so a failure replays) and requires podwatch's "same pod /
// restart" verdict to be the kubelet's on each pair, the original against
// the edited and one edit against the next.
func TestEditsRestartAsTheKubelet(t *testing.T) {
	seeds := editSeeds(t)
	runs, judged, restarts := editRuns(t), 0, 0
	for i := range runs {
		rng := rand.New(rand.NewPCG(uint64(i), 0x9e3779b9))
		a := seeds[rng.IntN(len(seeds))]
		b, what, ok := mutate(a, rng, 1+rng.IntN(3))
		if !ok {
			continue
		}
		if judgeEdit(t, a, b, what) {
			judged++
			if u := DecodeAt("web.yaml", pairPath, a, nodeName).Pod.UID; u != DecodeAt("web.yaml", pairPath, b, nodeName).Pod.UID {
				restarts++
			}
		}
	}
	if judged < runs/4 || restarts == 0 || restarts == judged {
		t.Fatalf("%d runs judged %d pairs, %d restarts: the edits no longer exercise both verdicts", runs, judged, restarts)
	}
	t.Logf("%d runs: %d edited pairs judged, %d restart, %d do not; podwatch agreed on all", runs, judged, restarts, judged-restarts)
}

// FuzzEditPair lets the fuzzer choose the seed and the edits. For a real
// session:
//
//	go test ./oracle/ -run '^$' -fuzz FuzzEditPair -fuzztime 5m
func FuzzEditPair(f *testing.F) {
	seeds := editSeeds(f)
	for i := range 8 {
		f.Add(uint64(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, r uint64, pick uint8) {
		rng := rand.New(rand.NewPCG(r, uint64(pick)))
		a := seeds[int(pick)%len(seeds)]
		b, what, ok := mutate(a, rng, 1+rng.IntN(4))
		if !ok {
			return
		}
		judgeEdit(t, a, b, what)
	})
}
