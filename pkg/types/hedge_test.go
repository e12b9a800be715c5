package types

import "testing"

// A claim's hedge is one short clause: what may come on the way and
// through which file, that the change may not come, what may follow, an
// estimate; nothing for a claim that allows only the change.
func TestHedgeWordsTheClaim(t *testing.T) {
	unbounded := Range{Min: 0}
	for _, tc := range []struct {
		name string
		c    *Claim
		want string
	}{
		{"nil", nil, ""},
		{"plain", &Claim{Op: OpUpdate, Before: Bounded(0, 0)}, ""},
		{"sed", &Claim{Op: OpUpdate, Before: Bounded(0, 1), Via: []string{"sedQ3xZ9a"}}, "may restart it once more first (sed's temp file)"},
		{"certain", &Claim{Op: OpUpdate, Before: Bounded(2, 2), Via: []string{"web.yaml~", "web.yaml", "x.yaml"}},
			"restarts it 2 more times first (the backup web.yaml~, web.yaml and 1 more)"},
		{"range", &Claim{Op: OpUpdate, Before: Bounded(1, 3)}, "restarts it 1 to 3 more times first"},
		{"behind", &Claim{Op: OpUpdate, Before: unbounded}, "may restart it more times first"},
		{"capped", &Claim{Op: OpUpdate, Before: unbounded, Capped: true}, "may restart it more times first (more ways than podwatch follows)"},
		{"folded", &Claim{Op: OpRemove, Before: unbounded, MaySkip: true, Folded: true, Via: []string{"web.yaml~"}},
			"may restart it more times first (the folder changed faster than podwatch follows every way; the backup web.yaml~), may skip this"},
		{"skip", &Claim{Op: OpRemove, Before: Bounded(0, 0), MaySkip: true, Estimate: true}, "may skip this, its time is an estimate"},
		{"first list", &Claim{Op: OpAdd, Before: Bounded(0, 0), Estimate: true}, ""},
		{"amendment", &Claim{Before: unbounded, Amends: []uint64{3, 4}}, ""},
		{"after", &Claim{Op: OpUpdate, Before: Bounded(0, 1), After: After{Max: 1}, Via: []string{"sedQ3xZ9a"}},
			"may restart it once more first (sed's temp file), then may stop and start it once"},
	} {
		if got := tc.c.Hedge(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
