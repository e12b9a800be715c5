package model

import (
	"errors"
	"slices"
	"testing"
)

// Of two keys, one read with a choice ends two ways, the other one way:
// only the first is named, with what its other way runs; a capped part
// names its keys with nothing known of the ways left out.
func TestDifferingNamesOnlyKeysWhoseWaysDiffer(t *testing.T) {
	webOld := Pod{Key: "default/web", UID: "w1", Semantic: "w1", File: "/m/web.yaml"}
	webNew := Pod{Key: "default/web", UID: "w2", Semantic: "w2", File: "/m/web.yaml"}
	db := Pod{Key: "default/db", UID: "d2", Semantic: "d2", File: "/m/db.yaml"}
	k := NewKubelet()
	k.Take([]Input{{Relist: &Listing{Files: []Listed{
		{Entry: Entry{Path: "/m/db.yaml"}, Reads: []Outcome{{Pod: &Pod{Key: "default/db", UID: "d1", Semantic: "d1", File: "/m/db.yaml"}}}},
		{Entry: Entry{Path: "/m/web.yaml"}, Reads: []Outcome{{Pod: &webOld}}},
	}}}})
	inputs := []Input{
		{Event: &WatchEvent{Path: "/m/web.yaml", Type: PodModify}, Reads: []Outcome{{Pod: &webNew}, {Err: ErrUnread}}},
		{Event: &WatchEvent{Path: "/m/db.yaml", Type: PodModify}, Reads: []Outcome{{Pod: &db}}},
	}
	e := Explore(k, inputs, 32)
	got := e.Differing()
	if len(got) != 1 || !slices.Equal(got["default/web"], []string{webOld.identity()}) {
		t.Errorf("differing %q, want web alone, its other way running its old pod", got)
	}
	e.Parts[0].Capped = true
	for _, key := range e.Parts[0].Keys {
		if runs, ok := e.Differing()[key]; !ok || runs != nil {
			t.Errorf("capped part's %s: %q marked %v, want marked with nothing known", key, runs, ok)
		}
	}
}

// A relist replaces the store on every way only when some file it lists
// gives a pod on every read it may have had.
func TestReplacesStore(t *testing.T) {
	p := &Pod{Key: "default/web", UID: "w", Semantic: "w", File: "/m/web.yaml"}
	relist := func(reads ...Outcome) []Input {
		return []Input{{Relist: &Listing{Files: []Listed{{Entry: Entry{Path: "/m/web.yaml"}, Reads: reads}}}}}
	}
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   bool
	}{
		{"a sure pod", relist(Outcome{Pod: p}), true},
		{"a pod or invalid", relist(Outcome{Pod: p}, Outcome{Err: errors.New("invalid")}), false},
		{"invalid", relist(Outcome{Err: errors.New("invalid")}), false},
		{"missing", []Input{{Relist: &Listing{Missing: true}}}, false},
		{"an event", []Input{{Event: &WatchEvent{Path: "/m/web.yaml", Type: PodModify}, Reads: []Outcome{{Pod: p}}}}, false},
	} {
		if got := ReplacesStore(tc.inputs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
