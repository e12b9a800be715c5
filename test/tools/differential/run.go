package differential

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Markers are pods the harness installs to learn that a side has caught up:
// each side handles the folder's changes in order, so once it has added a
// marker it has acted on every step before it. They live in a namespace of
// their own, which scenarios never use, and are left out of the results.
// Their files sort before any scenario file, so a relist reads the first
// marker before anything else: '!' sorts before the '#' of emacs's
// auto-save files and the digits of kubeadm's.
const (
	markerNamespace  = "podwatch-harness"
	markerFilePrefix = "!harness-"
)

// Options configure Run.
type Options struct {
	// Dir is the folder both sides watch; it must exist and be empty.
	Dir      string
	NodeName string
	// Relist is the kubelet's file check period and podwatch's
	// FileCheckFrequency.
	Relist time.Duration
	// Settle is podwatch's settle delay.
	Settle time.Duration
	// Wait bounds every wait for a side.
	Wait time.Duration
}

// Result is what each side did, op by op, tagged by phase: phase 0 is the
// listing at start, and each settle or relist step ends one.
type Result struct {
	Scenario string `json:"scenario"`
	Phases   int    `json:"phases"`
	Kubelet  []Op   `json:"kubelet"`
	Podwatch []Op   `json:"podwatch"`
	// Notes are what either side logged or reported besides pod changes
	// (the kubelet's errors, podwatch's problems), for reading.
	Notes []string `json:"notes,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Op is one pod change as a side reported it.
type Op struct {
	Phase int    `json:"phase"`
	Pod   string `json:"pod"` // namespace/name
	// Op is the side's own word: the kubelet's ADD, UPDATE, REMOVE, DELETE
	// or RECONCILE; podwatch's ADD, UPDATE or REMOVE.
	Op      string `json:"op"`
	UID     string `json:"uid,omitempty"`      // kubelet
	Image   string `json:"image,omitempty"`    // kubelet
	File    string `json:"file,omitempty"`     // podwatch
	InPlace bool   `json:"in_place,omitempty"` // podwatch: an UPDATE keeping a pinned metadata.uid
}

// Run plays sc in opts.Dir to both sides and returns what they did. It
// starts the kubelet's file source, which never stops: call it once per
// process.
func Run(ctx context.Context, sc *Scenario, opts Options) (*Result, error) {
	h := &harness{sc: sc, opts: opts}
	for _, st := range sc.Setup {
		if err := h.apply(st); err != nil {
			return nil, err
		}
	}
	if err := h.start(ctx); err != nil {
		return nil, h.fail(err)
	}
	if err := h.settle(ctx); err != nil {
		return nil, h.fail(err)
	}
	for _, st := range sc.Steps {
		var err error
		switch st.Op {
		case "settle":
			err = h.settle(ctx)
		case "relist":
			err = h.relist(ctx)
		default:
			err = h.apply(st)
		}
		if err != nil {
			return nil, h.fail(fmt.Errorf("line %d: %s: %w", st.Line, st.Op, err))
		}
	}
	return h.result(), nil
}

type harness struct {
	sc     *Scenario
	opts   Options
	kube   *kubeletSide
	pw     *podwatchSide
	phase  int    // the phase the steps now played belong to
	seq    int    // markers installed
	first  string // path of the first marker file, which a relist reads again
	closed []string
}

func (h *harness) path(name string) string { return filepath.Join(h.opts.Dir, name) }

func (h *harness) apply(st Step) error {
	switch st.Op {
	case "write":
		return os.WriteFile(h.path(st.Args[0]), h.sc.Fixtures[st.Args[1]], 0o600)
	case "rename":
		return os.Rename(h.path(st.Args[0]), h.path(st.Args[1]))
	case "remove":
		return os.Remove(h.path(st.Args[0]))
	}
	return fmt.Errorf("line %d: no step %q", st.Line, st.Op)
}

// install writes data to a dot file, which both sides ignore, and renames
// it onto path, as kubeadm and most tools install a manifest: neither side
// can read it half written.
func install(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// start starts podwatch, then the kubelet, and returns once both watch the
// folder.
func (h *harness) start(ctx context.Context) error {
	pw, err := startPodwatch(ctx, h.opts.Dir, h.opts.NodeName, h.opts.Relist, h.opts.Settle)
	if err != nil {
		return err
	}
	h.pw = pw
	// Run starts its watch before it lists, and every snapshot says whether
	// the watch is up; when the inotify instances of this user have run
	// out, it is retried with a backoff.
	if err := pw.b.await(ctx, h.opts.Wait, "podwatch's watch",
		func() bool { return pw.watchUp }, pw.state); err != nil {
		return err
	}
	before, err := dirWatches(h.opts.Dir)
	if err != nil {
		return err
	}
	h.kube = startKubelet(ctx, h.opts.Dir, h.opts.NodeName, h.opts.Relist)
	if err := h.kube.b.await(ctx, h.opts.Wait, "the kubelet's first listing",
		func() bool { return h.kube.updates > 0 }, h.kube.state); err != nil {
		return err
	}
	// The kubelet's watch comes up on a goroutine of its own, after its
	// first listing or before, and is retried with a backoff when it fails
	// (as it does when this user's inotify instances have run out).
	// Nothing signals it, so poll for it.
	deadline := time.Now().Add(h.opts.Wait)
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for {
		n, err := dirWatches(h.opts.Dir)
		if err != nil {
			return err
		}
		if n > before {
			return nil
		}
		if time.Now().After(deadline) {
			var seen string
			h.kube.b.read(func() { seen = h.kube.state() })
			return fmt.Errorf("the kubelet's inotify watch on %s: not within %v (%d watches, %d before it started); seen: %s",
				h.opts.Dir, h.opts.Wait, n, before, seen)
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// settle ends the phase: it installs a marker and waits until both sides
// have added it and podwatch has nothing left waiting to settle, then
// installs a second marker and waits for both to add it too. The second
// round is for the kubelet: one merge of its pod config can send several
// updates (REMOVE, ADD, UPDATE, in that order), and one with the first
// marker may be followed by another from the same merge; the second
// marker's update comes after all of them.
func (h *harness) settle(ctx context.Context) error {
	a, err := h.marker()
	if err != nil {
		return err
	}
	if err := h.awaitMarker(ctx, a); err != nil {
		return err
	}
	b, err := h.marker()
	if err != nil {
		return err
	}
	if err := h.awaitMarker(ctx, b); err != nil {
		return err
	}
	h.closed = append(h.closed, b)
	h.phase++
	return nil
}

func (h *harness) marker() (string, error) {
	name := fmt.Sprintf("m%03d", h.seq)
	h.seq++
	path := h.path(markerFilePrefix + name + ".yaml")
	if h.first == "" {
		h.first = path
	}
	pod := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: marker\n    image: registry.k8s.io/pause:3.10\n",
		name, markerNamespace)
	return name, install(path, []byte(pod))
}

func (h *harness) awaitMarker(ctx context.Context, name string) error {
	k, p := h.kube, h.pw
	if err := k.b.await(ctx, h.opts.Wait, "the kubelet adds marker "+name,
		func() bool { return k.markers[name] }, k.state); err != nil {
		return err
	}
	return p.b.await(ctx, h.opts.Wait, "podwatch adds marker "+name+" and has nothing left to settle",
		func() bool { return p.markers[name] && p.idle }, p.state)
}

// relist waits for a full list by each side that began after this call,
// then settles. The kubelet's is seen as a new read of the first marker's
// file, which nothing but a relist reads again and which a relist reads
// first; podwatch's is a snapshot marked Relist.
func (h *harness) relist(ctx context.Context) error {
	k, p := h.kube, h.pw
	var reads, relists int
	k.b.read(func() { reads = k.reads[h.first] })
	p.b.read(func() { relists = p.relists })
	if err := k.b.await(ctx, h.opts.Wait+h.opts.Relist, "a relist by the kubelet",
		func() bool { return k.reads[h.first] > reads }, k.state); err != nil {
		return err
	}
	if err := p.b.await(ctx, h.opts.Wait+h.opts.Relist, "a relist by podwatch",
		func() bool { return p.relists > relists }, p.state); err != nil {
		return err
	}
	return h.settle(ctx)
}

// result tags each side's ops with their phase: a phase ends with the batch
// that added its closing marker.
func (h *harness) result() *Result {
	r := &Result{Scenario: h.sc.Name, Phases: h.phase}
	h.kube.b.read(func() {
		r.Kubelet = phased(h.kube.batches, h.closed)
		for _, e := range h.kube.errs {
			r.Notes = append(r.Notes, "kubelet: "+e)
		}
	})
	h.pw.b.read(func() {
		r.Podwatch = phased(h.pw.batches, h.closed)
		for _, pr := range h.pw.problems {
			r.Notes = append(r.Notes, "podwatch: "+pr)
		}
	})
	return r
}

func phased(batches []batch, closing []string) []Op {
	var out []Op
	phase := 0
	for _, bt := range batches {
		for _, op := range bt.ops {
			op.Phase = phase
			out = append(out, op)
		}
		for phase < len(closing) && slices.Contains(bt.markers, closing[phase]) {
			phase++
		}
	}
	return out
}

// fail adds what each side saw to err.
func (h *harness) fail(err error) error {
	var parts []string
	if h.kube != nil {
		h.kube.b.read(func() { parts = append(parts, "kubelet: "+h.kube.state()) })
	}
	if h.pw != nil {
		h.pw.b.read(func() { parts = append(parts, "podwatch: "+h.pw.state()) })
		select {
		case rerr := <-h.pw.done:
			parts = append(parts, fmt.Sprintf("podwatch's source ended: %v", rerr))
		default:
		}
	}
	if len(parts) == 0 {
		return err
	}
	return errors.Join(err, errors.New(strings.Join(parts, "\n")))
}

func sortedNames(s setOfName) []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
