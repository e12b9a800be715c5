package differential

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"github.com/podwatch/podwatch/pkg/model"
	ptypes "github.com/podwatch/podwatch/pkg/types"
)

// A fuzz round plays random changes of a folder to the kubelet's own file
// source and pod config, then replays what a second inotify watch saw on
// the port (pkg/model) along every choice: each read's outcome (any
// content the file ever held, invalid, gone) and each relist's place among
// the deletions around it. The kubelet's own outcome, pod by pod, must be
// one of the ends explored.
//
// The kubelet's log gives the order of its reads and relists; its relists
// are told by two folders that sort first and last, which it logs at each
// relist and never reads. The changes never make two identical inotify
// events in a row, so that neither watch folds two into one and the two
// see the same events.

// The relist clocks: folders, not pods, so that a relist can find no pod.
const (
	clockFirst = "!relist-clock"
	clockLast  = "~relist-end"
	notDir     = "Provided manifest path is a directory, not recursing into manifest path"
)

// FuzzResult is what one round found.
type FuzzResult struct {
	Seed    uint64              `json:"seed"`
	Ops     []string            `json:"ops"`
	Inputs  int                 `json:"inputs"`
	Ends    int                 `json:"ends"`
	Capped  bool                `json:"capped"`
	Covered bool                `json:"covered"`
	Kubelet map[string][]string `json:"kubelet"`
	Error   string              `json:"error,omitempty"`
	// Bridge is the verdict on the same round replayed over podwatch's
	// snapshots.
	Bridge *BridgeResult `json:"bridge,omitempty"`
	// Engines are the verdicts on the claims of podwatch's diff engines
	// over the same snapshots (enginefuzz.go).
	Engines []EngineResult `json:"engines,omitempty"`
	// Recording is the round kept for replay, when an engine did not
	// cover it.
	Recording *Recording `json:"recording,omitempty"`
}

// fuzzCap bounds the distinct states the port explores after an input.
const fuzzCap = 1 << 11

type logEntry struct {
	path   string
	relist bool      // a relist clock, not a read
	at     time.Time // when it was logged
}

// fuzzKubelet keeps, in order, what the kubelet read and what it sent.
type fuzzKubelet struct {
	b       *board
	log     []logEntry
	updates []kubetypes.PodUpdate
}

type fuzzLog struct{ k *fuzzKubelet }

func (l *fuzzLog) Init(logr.RuntimeInfo)  {}
func (l *fuzzLog) Enabled(level int) bool { return level <= 3 }
func (l *fuzzLog) Info(_ int, msg string, kv ...any) {
	if path, ok := lookup(kv, "path"); ok && msg == readingFile {
		at := time.Now()
		l.k.b.update(func() { l.k.log = append(l.k.log, logEntry{path: path, at: at}) })
	}
}
func (l *fuzzLog) Error(_ error, msg string, kv ...any) {
	if path, ok := lookup(kv, "path"); ok && msg == notDir {
		at := time.Now()
		l.k.b.update(func() { l.k.log = append(l.k.log, logEntry{path: path, relist: true, at: at}) })
	}
}
func (l *fuzzLog) WithValues(...any) logr.LogSink { return l }
func (l *fuzzLog) WithName(string) logr.LogSink   { return l }

// fuzzWatch is the second inotify watch: the events it saw, in order.
type fuzzWatch struct {
	b      *board
	events []fsnotify.Event
}

// content is one version a change writes: a pod of a name with an image
// found nowhere else, or an invalid manifest.
type content struct {
	name, image string
	valid       bool
}

func (c content) bytes() []byte {
	s := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + c.name + "\nspec:\n  containers:\n  - name: c\n    image: " + c.image + "\n"
	if !c.valid {
		s += "    imagePullPolicy: Sometimes\n"
	}
	return []byte(s)
}

// FuzzRound plays one round in dir, an empty folder, with the changes seed
// draws; the kubelet lists it every period. settle is podwatch's settle
// delay in the replay of its diff engines; negative, the round judges no
// engine (and runs no source for them).
func FuzzRound(ctx context.Context, dir string, seed uint64, period, settle time.Duration) (*FuzzResult, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	res := &FuzzResult{Seed: seed}
	r := &round{dir: dir, rng: rng, res: res, held: map[string][]version{}, now: map[string]content{}}
	for _, d := range []string{clockFirst, clockLast} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	for range rng.IntN(3) {
		name := r.name()
		if err := r.install(name, r.content(name)); err != nil {
			return nil, err
		}
	}
	res.Ops, r.ops = nil, nil // the folder at start is the first listing's, not a change
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return nil, err
	}
	fw := &fuzzWatch{b: newBoard()}
	go func() {
		for {
			select {
			case e, ok := <-w.Events:
				if !ok {
					return
				}
				fw.b.update(func() { fw.events = append(fw.events, e) })
			case <-w.Errors:
			}
		}
	}()
	before, err := dirWatches(dir)
	if err != nil {
		return nil, err
	}
	k := &fuzzKubelet{b: newBoard()}
	logger := logr.New(&fuzzLog{k: k})
	cfg := config.NewPodConfig(&record.FakeRecorder{}, nil)
	ch := cfg.Channel(klog.NewContext(ctx, logger), kubetypes.FileSource)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case u := <-cfg.Updates():
				k.b.update(func() { k.updates = append(k.updates, u) })
			}
		}
	}()
	config.NewSourceFile(logger, dir, types.NodeName(node), period, ch)
	if err := k.b.await(ctx, waitLimit, "the kubelet's first listing", func() bool { return len(k.updates) > 0 }, func() string { return "" }); err != nil {
		return nil, err
	}
	if err := awaitWatches(ctx, dir, before); err != nil {
		return nil, err
	}
	pw, err := startFuzzPodwatch(ctx, dir, time.Hour, 0)
	if err != nil {
		return nil, err
	}
	// The engines' source lists the folder every period as the kubelet
	// does, as the agent's does by default.
	sources := []*fuzzPodwatch{pw}
	if settle >= 0 {
		epw, err := startFuzzPodwatch(ctx, dir, period, settle)
		if err != nil {
			return nil, err
		}
		sources = append(sources, epw)
	}

	var base int // the kubelet's updates before the changes: the start
	k.b.read(func() { base = len(k.updates) })
	for range 4 + rng.IntN(6) {
		if err := r.change(); err != nil {
			return nil, err
		}
	}
	// Quiet now: two whole relists that began after the last change leave
	// the kubelet's store as the folder is, whatever it took in late.
	var from int
	k.b.read(func() { from = len(k.log) })
	if err := k.b.await(ctx, waitLimit+4*period, "two relists after the changes", func() bool {
		return relistsSince(k.log, from) >= 2
	}, func() string { return fmt.Sprint(len(k.log), " log entries") }); err != nil {
		return nil, err
	}
	cut := filepath.Join(dir, "!harness-cut.yaml")
	if err := install(cut, content{name: "cut", image: "cut", valid: true}.bytes()); err != nil {
		return nil, err
	}
	if err := k.b.await(ctx, waitLimit, "the kubelet adds the cut", func() bool { return addsName(k.updates, "cut") >= 0 }, func() string { return "" }); err != nil {
		return nil, err
	}
	if err := fw.b.await(ctx, waitLimit, "the watch sees the cut", func() bool {
		return slices.ContainsFunc(fw.events, func(e fsnotify.Event) bool { return e.Name == cut })
	}, func() string { return "" }); err != nil {
		return nil, err
	}

	for _, p := range sources {
		if err := p.b.await(ctx, waitLimit, "podwatch sees the cut", func() bool {
			return slices.ContainsFunc(p.snaps, func(s ptypes.Snapshot) bool {
				return slices.ContainsFunc(s.Files, func(f *ptypes.File) bool { return f.Path == cut })
			})
		}, func() string { return "" }); err != nil {
			return nil, err
		}
	}

	var log []logEntry
	var updates []kubetypes.PodUpdate
	var events []fsnotify.Event
	var snaps []ptypes.Snapshot
	var esnaps []ptypes.Snapshot
	pw.b.read(func() { snaps = slices.Clone(pw.snaps) })
	if len(sources) > 1 {
		sources[1].b.read(func() { esnaps = slices.Clone(sources[1].snaps) })
	}
	k.b.read(func() {
		log = k.log[:slices.IndexFunc(k.log, func(e logEntry) bool { return e.path == cut })]
		updates = k.updates[:addsName(k.updates, "cut")]
	})
	fw.b.read(func() {
		events = fw.events[:slices.IndexFunc(fw.events, func(e fsnotify.Event) bool { return e.Name == cut })]
	})
	inputs, err := r.timeline(log, events)
	if err != nil {
		return res, err
	}
	res.Inputs = len(inputs)
	ex := model.Explore(model.NewKubelet(), inputs, fuzzCap)
	res.Capped = ex.Capped
	res.Kubelet = kubeletRuns(updates)
	res.Covered, res.Ends = covers(ex, res.Kubelet, func(semantic string) string { return semantic })
	var relists []time.Time
	for _, e := range log {
		if e.relist && filepath.Base(e.path) == clockFirst {
			relists = append(relists, e.at)
		}
	}
	res.Bridge = bridge(snaps, relists, cut, res.Kubelet)
	if settle < 0 {
		return res, nil
	}
	rec := &Recording{Seed: seed, Ops: res.Ops, Dir: dir, Period: period, Settle: settle, Relists: relistSpans(log),
		Kubelet: kubeletOps(updates[base:], fuzzPod), Runs: res.Kubelet, Start: running(kubeletOps(updates[:base], fuzzPod))}
	res.Engines = engineVerdicts(esnaps, rec.Relists, dir, period, settle, rec.Kubelet, rec.Runs, rec.Start)
	rec.Verdicts = map[string]bool{}
	for _, e := range res.Engines {
		rec.Verdicts[e.Engine+"/"+e.Relists] = e.Covered
		if !e.Covered {
			res.Recording = rec
		}
	}
	if res.Recording != nil {
		rec.record(esnaps)
	}
	for i := range res.Engines {
		if e := &res.Engines[i]; e.Debug != nil {
			var lines []string
			for _, l := range log {
				what := "kubelet read "
				if l.relist {
					what = "kubelet relist mark "
				}
				lines = append(lines, what+filepath.Base(l.path)+" @"+l.at.Format("05.000000"))
			}
			e.Debug = append(lines, e.Debug...)
		}
	}
	if res.Bridge.Debug != nil {
		for _, e := range log {
			what := "kubelet read "
			if e.relist {
				what = "kubelet relist mark "
			}
			res.Bridge.Debug = append(res.Bridge.Debug, what+filepath.Base(e.path)+" @"+e.at.Format("05.000000"))
		}
	}
	return res, nil
}

// round is one round's folder and what it held.
type round struct {
	dir  string
	rng  *rand.Rand
	res  *FuzzResult
	held map[string][]version // path -> every version it held, in turn
	now  map[string]content   // path -> what it holds
	last string               // the last visible event, "path op"
	n    int                  // versions made
	// ops holds, per change, how many visible events it makes and, per
	// path, the version it held before the change: no read of an event of
	// the change, or of a relist after it, sees an older one.
	ops []opFloor
}

type opFloor struct {
	events int
	floor  map[string]int
}

// begin notes a change that makes n visible events.
func (r *round) begin(n int) {
	f := map[string]int{}
	for p, vs := range r.held {
		f[p] = len(vs) - 1
	}
	r.ops = append(r.ops, opFloor{events: n, floor: f})
}

// fuzzNames are the files of each pod: as on a node, a file holds one
// pod, its backups and an editor's temp files the same, and a rename
// stays among them.
var fuzzNames = map[string][]string{
	"a": {"a.yaml", "a.yaml.bak", "sedX1"},
	"b": {"b.yaml", "c.yaml", "sedX2"},
}

// family is the pod whose files name is among.
func family(name string) string {
	for pod, names := range fuzzNames {
		if slices.Contains(names, name) {
			return pod
		}
	}
	return ""
}

func (r *round) name() string {
	names := fuzzNames[[]string{"a", "b"}[r.rng.IntN(2)]]
	return names[r.rng.IntN(len(names))]
}

// content is a new version of a file of name's pod.
func (r *round) content(name string) content {
	r.n++
	return content{name: family(name), image: fmt.Sprintf("img:%d", r.n), valid: r.rng.IntN(5) > 0}
}

func (r *round) path(name string) string { return filepath.Join(r.dir, name) }

// version is one state of a path: a content, written whole (moved in) or
// not (a read may find it partly written), or none.
type version struct {
	c       content
	partial bool
	gone    bool
}

func (r *round) put(name string, c content) { r.putAs(name, c, false) }

func (r *round) putAs(name string, c content, partial bool) {
	r.now[name] = c
	r.held[r.path(name)] = append(r.held[r.path(name)], version{c: c, partial: partial})
}

// drop notes that name is gone.
func (r *round) drop(name string) {
	delete(r.now, name)
	r.held[r.path(name)] = append(r.held[r.path(name)], version{gone: true})
}

// install renames a dot file onto name: one visible event, a create.
func (r *round) install(name string, c content) error {
	r.begin(1)
	r.put(name, c)
	r.res.Ops = append(r.res.Ops, fmt.Sprintf("install %s %v", name, c))
	r.last = name + " create"
	return install(r.path(name), c.bytes())
}

// change makes one random change whose first visible event is not the
// last one's.
func (r *round) change() error {
	for {
		name := r.name()
		_, exists := r.now[name]
		switch op := r.rng.IntN(5); {
		case op == 0 && !exists && r.last != name+" create":
			c := r.content(name)
			r.begin(2) // create, write
			r.putAs(name, c, true)
			r.res.Ops = append(r.res.Ops, fmt.Sprintf("create %s %v", name, c))
			r.last = name + " write"
			return os.WriteFile(r.path(name), c.bytes(), 0o600)
		case op == 1 && r.last != name+" create":
			return r.install(name, r.content(name))
		case op == 2 && exists && r.last != name+" rename":
			to := r.name()
			if to == name || family(to) != family(name) || r.last == to+" create" {
				continue
			}
			r.begin(2) // rename away, create
			r.put(to, r.now[name])
			r.drop(name)
			r.res.Ops = append(r.res.Ops, fmt.Sprintf("rename %s %s", name, to))
			r.last = to + " create"
			return os.Rename(r.path(name), r.path(to))
		case op == 3 && exists && r.last != name+" remove":
			r.begin(1)
			r.drop(name)
			r.res.Ops = append(r.res.Ops, "remove "+name)
			r.last = name + " remove"
			return os.Remove(r.path(name))
		case op == 4 && exists && r.last != name+" chmod":
			r.begin(1)
			r.res.Ops = append(r.res.Ops, "chmod "+name)
			r.last = name + " chmod"
			return os.Chmod(r.path(name), os.FileMode(0o600|r.rng.IntN(2)*0o040))
		}
	}
}

// outcomes are what a read of path may have got: each state it was in
// from floor's on (a pod, invalid, gone), and invalid too where it was
// written in place, which a read may find partly done.
func (r *round) outcomes(path string, floor map[string]int) []model.Outcome {
	var out []model.Outcome
	add := func(o model.Outcome) {
		if !slices.ContainsFunc(out, func(x model.Outcome) bool {
			return x.Err == o.Err && (x.Pod == nil) == (o.Pod == nil) && (x.Pod == nil || *x.Pod == *o.Pod)
		}) {
			out = append(out, o)
		}
	}
	from, ok := floor[path]
	if !ok {
		add(model.Outcome{Err: os.ErrNotExist}) // not there before the change
	}
	for _, v := range r.held[path][max(from, 0):] {
		switch {
		case v.gone:
			add(model.Outcome{Err: os.ErrNotExist})
		case !v.c.valid:
			add(model.Outcome{Err: errFuzzInvalid})
		default:
			if v.partial {
				add(model.Outcome{Err: errFuzzInvalid})
			}
			add(model.Outcome{Pod: &model.Pod{Key: "default/" + v.c.name + "-" + node, UID: path + "\x00" + v.c.image, Semantic: v.c.image}})
		}
	}
	return out
}

var errFuzzInvalid = fmt.Errorf("invalid")

// timeline is the inputs in the kubelet's order: the watch's events,
// whose reads the log matches one for one, with each relist of the log
// put before the next read after it, free to come before the deletions
// since the read before it.
func (r *round) timeline(log []logEntry, events []fsnotify.Event) ([]model.Input, error) {
	var inputs []model.Input
	var visible []fsnotify.Event
	for _, ev := range events {
		if _, ok := model.ProduceWatchEvent(ev.Name, fsOp(ev.Op)); ok && !r.harness(ev.Name) {
			visible = append(visible, ev)
		}
	}
	// floors[v] is the floor of visible event v's change; all zero when
	// the events are not the changes' (then every version is a choice).
	floors := make([]map[string]int, len(visible))
	n := 0
	for _, op := range r.ops {
		for range op.events {
			if n < len(floors) {
				floors[n] = op.floor
			}
			n++
		}
	}
	if n != len(visible) {
		clear(floors)
	}
	relistFloor := map[string]int{} // the floor of the change of the read before
	i := 0                          // next log entry
	// relists takes every relist of the log before the next watch read.
	relists := func(deletes int) error {
		for i < len(log) && log[i].relist && filepath.Base(log[i].path) == clockFirst {
			l := &model.Listing{}
			for {
				i++
				if i >= len(log) {
					return nil // cut in the middle: it changed nothing
				}
				e := log[i]
				if e.relist {
					if filepath.Base(e.path) == clockLast {
						i++
						break
					}
					return fmt.Errorf("log entry %d: relist clock %s inside a relist", i, e.path)
				}
				l.Files = append(l.Files, model.Listed{Entry: model.Entry{Path: e.path, Kind: model.EntryRegular}, Reads: r.outcomes(e.path, relistFloor)})
			}
			inputs = append(inputs, model.Input{Relist: l, Early: deletes})
		}
		return nil
	}
	deletes := 0
	for v, ev := range visible {
		e, _ := model.ProduceWatchEvent(ev.Name, fsOp(ev.Op))
		if e.Type == model.PodDelete {
			inputs = append(inputs, model.Input{Event: &e})
			deletes++
			continue
		}
		if err := relists(deletes); err != nil {
			return nil, err
		}
		if i >= len(log) || log[i].relist || log[i].path != e.Path {
			return nil, fmt.Errorf("the watch's read of %s (event %v) is not the kubelet's next (log %d of %d: %+v)", e.Path, ev, i, len(log), log[min(i, len(log)-1)])
		}
		i++
		inputs = append(inputs, model.Input{Event: &e, Reads: r.outcomes(e.Path, floors[v])})
		deletes = 0
		relistFloor = floors[v]
	}
	if err := relists(deletes); err != nil {
		return nil, err
	}
	if i != len(log) {
		return nil, fmt.Errorf("the kubelet's log has %d entries past the watch's events: %+v", len(log)-i, log[i:])
	}
	return inputs, nil
}

// harness says whether path is the harness's: a relist clock or the cut.
func (r *round) harness(path string) bool {
	b := filepath.Base(path)
	return strings.HasPrefix(b, "!") || strings.HasPrefix(b, "~")
}

func relistsSince(log []logEntry, from int) int {
	n, open := 0, false
	for _, e := range log[from:] {
		switch {
		case e.relist && filepath.Base(e.path) == clockFirst:
			open = true
		case e.relist && filepath.Base(e.path) == clockLast && open:
			n++
		}
	}
	return n
}

// addsName is the index of the first update that adds the pod name, -1
// when none does.
func addsName(updates []kubetypes.PodUpdate, name string) int {
	return slices.IndexFunc(updates, func(u kubetypes.PodUpdate) bool {
		return u.Op == kubetypes.ADD && slices.ContainsFunc(u.Pods, func(p *v1.Pod) bool { return p.Name == name+"-"+node })
	})
}

// kubeletRuns are the images each pod ran in turn, by its updates.
func kubeletRuns(updates []kubetypes.PodUpdate) map[string][]string {
	runs := map[string][]string{}
	for _, u := range updates {
		for _, p := range u.Pods {
			key := p.Namespace + "/" + p.Name
			if _, ok := runs[key]; !ok {
				runs[key] = []string{""}
			}
			switch u.Op {
			case kubetypes.REMOVE, kubetypes.DELETE:
				runs[key] = append(runs[key], "")
			case kubetypes.ADD, kubetypes.UPDATE:
				runs[key] = append(runs[key], images(p))
			}
		}
	}
	return normalRuns(runs)
}

// portRuns are an end's runs by image, which image names from a pod's
// semantic content.
func portRuns(end model.End, image func(semantic string) string) map[string][]string {
	runs := map[string][]string{}
	for key, r := range end.Runs {
		for _, id := range r {
			if id == "" {
				runs[key] = append(runs[key], "")
				continue
			}
			runs[key] = append(runs[key], image(model.SemanticOf(id)))
		}
	}
	return normalRuns(runs)
}

// normalRuns drops every "none" between two pods: a REMOVE and an ADD are
// one restart whether one merge sends them or two. A key that never ran
// anything is left out.
func normalRuns(runs map[string][]string) map[string][]string {
	out := map[string][]string{}
	for key, r := range runs {
		var n []string
		for i, id := range r {
			if id == "" && i > 0 && i < len(r)-1 {
				continue
			}
			n = append(n, id)
		}
		if len(n) > 1 || n[0] != "" {
			out[key] = n
		}
	}
	return out
}

func sameRuns(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for key, r := range a {
		if !slices.EqualFunc(r, b[key], func(x, y string) bool { return x == y || (x != "" && y == anyImage) }) {
			return false
		}
	}
	return true
}
