package model

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

var errInvalid = errors.New("invalid")

// at is a pod of key and config read from path, with the UID the kubelet
// derives from both.
func at(path, key, cfg string) *Pod {
	return &Pod{Key: key, UID: path + "\x00" + cfg, Semantic: cfg, File: path}
}

func ok(p *Pod) Outcome { return Outcome{Pod: p} }

var (
	gone    = Outcome{Err: fs.ErrNotExist}
	invalid = Outcome{Err: errInvalid}
)

func event(path string, t EventType, reads ...Outcome) Input {
	return Input{Event: &WatchEvent{Path: path, Type: t}, Reads: reads}
}

func listing(files ...Listed) *Listing { return &Listing{Files: files} }

func file(path string, reads ...Outcome) Listed {
	return Listed{Entry: Entry{Path: path, Kind: EntryRegular}, Reads: reads}
}

// listed is a kubelet that listed files, each read as its first outcome.
func listed(t *testing.T, files ...Listed) *Kubelet {
	t.Helper()
	k := NewKubelet()
	u, err := k.Source.ListConfig(true, listing(files...).entries(), listing(files...).read)
	if err != nil {
		t.Fatal(err)
	}
	k.Storage.Merge(u)
	return k
}

func wantSpan(t *testing.T, got Span, from, to string, before types.Range, maySkip bool, elsewhere int) {
	t.Helper()
	if got.From != from || got.To != to || fmt.Sprint(got.Before.Min, got.Before.Max == nil) != fmt.Sprint(before.Min, before.Max == nil) ||
		(before.Max != nil && *got.Before.Max != *before.Max) || got.MaySkip != maySkip || got.Elsewhere != elsewhere {
		t.Errorf("span from %q to %q, before %d-%s, maySkip %v, elsewhere %d; want from %q to %q, before %d-%s, maySkip %v, elsewhere %d",
			got.From, got.To, got.Before.Min, maxOf(got.Before), got.MaySkip, got.Elsewhere, from, to, before.Min, maxOf(before), maySkip, elsewhere)
	}
}

func maxOf(r types.Range) string {
	if r.Max == nil {
		return "unbounded"
	}
	return fmt.Sprint(*r.Max)
}

func id(p *Pod) string { return p.identity() }

// sed -i: its temp file is created, written and renamed onto etcd.yaml.
// podwatch never read the temp file; if the kubelet did, it ran its pod
// and dropped it at the rename: one restart more on the way.
func TestSedTempFileMayRestartOnceMore(t *testing.T) {
	const key = "kube-system/etcd"
	v1, tmp, v2 := at("m/etcd.yaml", key, "v1"), at("m/sedX", key, "v2"), at("m/etcd.yaml", key, "v2")
	k := listed(t, file("m/etcd.yaml", ok(v1)))
	e := Explore(k, []Input{
		event("m/sedX", PodAdd, gone, invalid, ok(tmp)),
		event("m/sedX", PodModify, gone, invalid, ok(tmp)),
		event("m/sedX", PodDelete),
		event("m/etcd.yaml", PodAdd, ok(v2)),
	}, 64)
	if e.Capped {
		t.Fatal("capped")
	}
	wantSpan(t, e.Span(key), id(v1), id(v2), types.Bounded(0, 1), false, 0)
}

// A relist that finds no valid file sends an empty list but keeps its
// store, which the next change of it sends again: the pod is dropped and
// started, a restart podwatch's own view (the file read valid) does not
// make.
func TestEmptyRelistMayRestart(t *testing.T) {
	a, b := at("m/a.yaml", "ns/a", "v1"), at("m/b.yaml", "ns/b", "v1")
	k := listed(t, file("m/a.yaml", ok(a)))
	e := Explore(k, []Input{
		{Relist: listing(file("m/a.yaml", ok(a), invalid))},
		event("m/b.yaml", PodAdd, ok(b)),
	}, 64)
	wantSpan(t, e.Span("ns/a"), id(a), id(a), types.Bounded(0, 1), false, 0)
	wantSpan(t, e.Span("ns/b"), "", id(b), types.Bounded(0, 0), false, 0)
}

// Where a relist falls among the events queued before it is a choice: a
// relist taken in before the write of a shadowed file leaves the write's
// pod running, after it the .bak's.
func TestRelistBeforeQueuedEvent(t *testing.T) {
	const key = "ns/a"
	bak, a1, a2 := at("m/a.yaml.bak", key, "v0"), at("m/a.yaml", key, "v1"), at("m/a.yaml", key, "v2")
	k := listed(t, file("m/a.yaml", ok(a1)), file("m/a.yaml.bak", ok(bak)))
	inputs := []Input{
		event("m/a.yaml", PodModify, ok(a2)),
		{Relist: listing(file("m/a.yaml", ok(a2)), file("m/a.yaml.bak", ok(bak))), Early: 1},
	}
	e := Explore(k, inputs, 64)
	if n := len(e.Part(key).Ends); n != 2 {
		t.Fatalf("%d ends, want 2: the relist after the event and before it", n)
	}
	wantSpan(t, e.Span(key), id(bak), id(bak), types.Bounded(2, 2), false, 1)
	inputs[1].Early = 0
	if e := Explore(k, inputs, 64); len(e.Part(key).Ends) != 1 {
		t.Errorf("a relist that cannot come early: %d ends, want 1", len(e.Part(key).Ends))
	}
}

// Past the cap of distinct states the result says so, and the span bounds
// nothing.
func TestCapIsReached(t *testing.T) {
	const key = "ns/a"
	k := listed(t, file("m/a.yaml", ok(at("m/a.yaml", key, "v0"))))
	var inputs []Input
	for i := range 6 {
		inputs = append(inputs, event("m/a.yaml", PodModify,
			ok(at("m/a.yaml", key, fmt.Sprint("v", i, "a"))), ok(at("m/a.yaml", key, fmt.Sprint("v", i, "b"))), invalid))
	}
	e := Explore(k, inputs, 8)
	if !e.Capped {
		t.Fatal("not capped")
	}
	if s := e.Span(key); s.Before.Max != nil || s.Before.Min != 0 {
		t.Errorf("capped span before %d-%v, want 0-unbounded", s.Before.Min, s.Before.Max)
	}
	if e := Explore(k, inputs, 1<<12); e.Capped {
		t.Errorf("capped at %d states", 1<<12)
	}
}

// Ways that meet go on as one: a thousand events with two reads each that
// end in the same state do not multiply.
func TestDistinctStatesOnly(t *testing.T) {
	const key = "ns/a"
	a := at("m/a.yaml", key, "v0")
	k := listed(t, file("m/a.yaml", ok(a)))
	var inputs []Input
	for range 1000 {
		inputs = append(inputs, event("m/a.yaml", PodModify, ok(a), invalid))
	}
	e := Explore(k, inputs, 4)
	if e.Capped || len(e.Part(key).Ends) != 1 {
		t.Errorf("capped %v with %d ends, want one end", e.Capped, len(e.Part(key).Ends))
	}
}

func (l *Listing) entries() []Entry {
	var es []Entry
	for _, f := range l.Files {
		es = append(es, f.Entry)
	}
	return es
}

func (l *Listing) read(path string) (Pod, error) {
	for _, f := range l.Files {
		if f.Path == path {
			return f.Reads[0].get()
		}
	}
	return Pod{}, fs.ErrNotExist
}

// Keys that no file links are explored apart: the choices of one do not
// multiply the other's, and a relist links them only through whether the
// rest of the folder gives a pod.
func TestPartsApart(t *testing.T) {
	var files []Listed
	var inputs []Input
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		path := "m/" + name + ".yaml"
		files = append(files, file(path, ok(at(path, "ns/"+name, "v0"))))
		for i := range 3 {
			inputs = append(inputs, event(path, PodModify, ok(at(path, "ns/"+name, fmt.Sprint("v", i))), invalid, gone))
		}
	}
	k := listed(t, files...)
	e := Explore(k, inputs, 64)
	if e.Capped || len(e.Parts) != 6 {
		t.Fatalf("capped %v, %d parts; want 6 parts, none capped", e.Capped, len(e.Parts))
	}
	for _, p := range e.Parts {
		if len(p.Keys) != 1 || len(p.Ends) > 16 {
			t.Errorf("part %v: %d ends", p.Keys, len(p.Ends))
		}
	}
	// A file that may give either of two keys joins them.
	inputs = append(inputs, event("m/a.yaml", PodModify, ok(at("m/a.yaml", "ns/b", "x"))))
	if e := Explore(k, inputs, 64); len(e.Parts) != 5 || len(e.Part("ns/a").Keys) != 2 {
		t.Errorf("%d parts, a's keys %v; want 5, a and b together", len(e.Parts), e.Part("ns/a").Keys)
	}
}

// A relist whose read of a part's file fails drops its pod from the store
// when the rest of the folder gives a pod; when the rest may give none
// too, it sends an empty list and keeps the store, which another part's
// later change sends again.
func TestRestOfTheFolderInARelist(t *testing.T) {
	a, b := at("m/a.yaml", "ns/a", "v1"), at("m/b.yaml", "ns/b", "v1")
	k := listed(t, file("m/a.yaml", ok(a)), file("m/b.yaml", ok(b)))
	// a.yaml may read invalid: with b always giving a pod, a is dropped
	// from the store and comes back only with its file.
	e := Explore(k, []Input{{Relist: listing(file("m/a.yaml", ok(a), invalid), file("m/b.yaml", ok(b)))}}, 64)
	wantSpan(t, e.Span("ns/a"), id(a), id(a), types.Bounded(0, 0), false, 1)
	if n := len(e.Part("ns/a").Ends); n != 2 {
		t.Errorf("a: %d ends, want 2 (kept, dropped)", n)
	}
	// The whole folder may read invalid: then the store is kept, and a
	// later add of another file brings a back.
	c := at("m/c.yaml", "ns/c", "v1")
	e = Explore(k, []Input{
		{Relist: listing(file("m/a.yaml", ok(a), invalid), file("m/b.yaml", ok(b), invalid))},
		event("m/c.yaml", PodAdd, ok(c)),
	}, 64)
	wantSpan(t, e.Span("ns/a"), id(a), id(a), types.Bounded(0, 1), false, 1)
}

// A relist that lists a key's one file as the kubelet holds it moves
// nothing for that key on any way: the key is left to the rest of the
// folder, so that a relist costs the keys whose listing differs. Any
// doubt keeps a key in a part: a second read, a watch event on its file,
// its file gone from the listing, a second file that may give it.
func TestRelistLeavesKeysListedAsHeldToTheRest(t *testing.T) {
	a, b, c := at("m/a.yaml", "ns/a", "v1"), at("m/b.yaml", "ns/b", "v1"), at("m/c.yaml", "ns/c", "v1")
	b2 := at("m/b.yaml", "ns/b", "v2")
	k := listed(t, file("m/a.yaml", ok(a)), file("m/b.yaml", ok(b)), file("m/c.yaml", ok(c)))
	relist := func(files ...Listed) Input { return Input{Relist: listing(files...)} }
	keysIn := func(e *Explored) []string {
		var keys []string
		for _, p := range e.Parts {
			for _, key := range p.Keys {
				if key != restKey {
					keys = append(keys, key)
				}
			}
		}
		return keys
	}
	cases := []struct {
		name   string
		inputs []Input
		want   string
	}{
		{"b changed", []Input{relist(file("m/a.yaml", ok(a)), file("m/b.yaml", ok(b2)), file("m/c.yaml", ok(c)))}, "[ns/b]"},
		{"a may read invalid", []Input{relist(file("m/a.yaml", ok(a), invalid), file("m/b.yaml", ok(b2)), file("m/c.yaml", ok(c)))}, "[ns/a ns/b]"},
		{"a written", []Input{event("m/a.yaml", PodModify, ok(a)), relist(file("m/a.yaml", ok(a)), file("m/b.yaml", ok(b)), file("m/c.yaml", ok(c)))}, "[ns/a]"},
		{"a not listed", []Input{relist(file("m/b.yaml", ok(b)), file("m/c.yaml", ok(c)))}, "[ns/a]"},
		{"a in a second file", []Input{relist(file("m/a.yaml", ok(a)), file("m/b.yaml", ok(b)), file("m/c.yaml", ok(c)), file("m/z.yaml", ok(at("m/z.yaml", "ns/a", "v1"))))}, "[ns/a]"},
		{"nothing changed", []Input{relist(file("m/a.yaml", ok(a)), file("m/b.yaml", ok(b)), file("m/c.yaml", ok(c)))}, "[]"},
		{"missing folder", []Input{{Relist: &Listing{Missing: true}}}, "[ns/a ns/b ns/c]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Explore(k, tc.inputs, 64)
			if got := fmt.Sprint(keysIn(e)); got != tc.want {
				t.Fatalf("keys explored %s, want %s", got, tc.want)
			}
		})
	}
	// The key that moved goes as it would with every key explored.
	e := Explore(k, cases[0].inputs, 64)
	wantSpan(t, e.Span("ns/b"), id(b), id(b2), types.Bounded(0, 0), false, 0)
}

// A file podwatch never read may have been a copy of any manifest the
// events name (Unseen). That guess links no keys: each key's part sees a
// read that gave another key as a pod of none of its own, which sends
// the store. Apart, the keys have the spans they have linked.
func TestUnseenGuessLinksNoKeys(t *testing.T) {
	a0, b0 := at("m/a.yaml", "ns/a", "v0"), at("m/b.yaml", "ns/b", "v0")
	a1 := at("m/a.yaml", "ns/a", "v1")
	k := listed(t, file("m/a.yaml", ok(a0)), file("m/b.yaml", ok(b0)))
	copyOf := func(prefix, key string) Outcome {
		return ok(&Pod{Key: key, UID: prefix + "m/4913 as " + key, Semantic: prefix + "m/4913", File: "m/4913"})
	}
	inputs := func(prefix string) []Input {
		return []Input{
			event("m/4913", PodModify, gone, invalid, copyOf(prefix, "ns/a"), copyOf(prefix, "ns/b")),
			event("m/4913", PodDelete),
			event("m/a.yaml", PodModify, ok(a1)),
		}
	}
	apart := Explore(k, inputs(Unseen), 64)
	if len(apart.Parts) != 2 {
		t.Fatalf("%d parts, want a and b apart", len(apart.Parts))
	}
	// The copy may have run a's pod once before v1, or b's, which its
	// deletion then stopped until a relist.
	wantSpan(t, apart.Span("ns/a"), id(a0), id(a1), types.Bounded(0, 1), false, 0)
	wantSpan(t, apart.Span("ns/b"), id(b0), id(b0), types.Bounded(0, 0), false, 1)
	// The same reads, had podwatch read them, link the keys: the spans
	// are the same.
	linked := Explore(k, inputs("read "), 64)
	if len(linked.Parts) != 1 {
		t.Fatalf("%d parts, want one", len(linked.Parts))
	}
	for _, key := range []string{"ns/a", "ns/b"} {
		l := linked.Span(key)
		wantSpan(t, apart.Span(key), l.From, l.To, l.Before, l.MaySkip, l.Elsewhere)
	}
}

// A read of a file podwatch never saw that may have given another part's
// key leaves no state in this part, but the file's deletion may drop that
// key, which sends the store: after a relist that found no valid file
// (the merge stopped a's pod, the store kept it), that starts a's pod
// again. Else a's pod stays stopped, as podwatch's own view has it.
func TestUnseenGuessOfAnotherKeyMaySendTheStoreAtItsDeletion(t *testing.T) {
	a0, b0 := at("m/a.yaml", "ns/a", "v0"), at("m/b.yaml", "ns/b", "v0")
	k := listed(t, file("m/a.yaml", ok(a0)), file("m/b.yaml", ok(b0)))
	copyOf := func(key string) Outcome {
		return ok(&Pod{Key: key, UID: Unseen + "m/4913 as " + key, Semantic: Unseen + "m/4913", File: "m/4913"})
	}
	e := Explore(k, []Input{
		event("m/4913", PodModify, gone, invalid, copyOf("ns/a"), copyOf("ns/b")),
		{Relist: listing(file("m/a.yaml", invalid), file("m/b.yaml", invalid))},
		event("m/4913", PodDelete),
	}, 64)
	if p := e.Part("ns/a"); p == nil || len(p.Keys) != 1 {
		t.Fatalf("a's part %+v, want a alone", p)
	}
	// Stopped at the relist, as podwatch's own view has it; or started
	// again by the deletion of the copy of b (or of a, one restart more).
	wantSpan(t, e.Span("ns/a"), id(a0), "", types.Bounded(0, 1), true, 0)
}
