package types

import (
	"encoding/json"
	"testing"
)

func TestRangeAdmits(t *testing.T) {
	r := Bounded(1, 2)
	for n, want := range map[int]bool{0: false, 1: true, 2: true, 3: false} {
		if got := r.Admits(n); got != want {
			t.Errorf("Bounded(1,2).Admits(%d) = %v, want %v", n, got, want)
		}
	}
	if open := (Range{Min: 1}); !open.Admits(100) || open.Admits(0) {
		t.Errorf("unbounded range [1, nil) admits wrongly")
	}
	if !Bounded(0, 0).Exact(0) || Bounded(0, 1).Exact(0) || (Range{}).Exact(0) {
		t.Errorf("Exact is wrong")
	}
}

func TestClaimJSONSaysUnboundedAsNull(t *testing.T) {
	b, err := json.Marshal(Claim{ID: 3, Op: OpUpdate, At: ClaimAtWatch, Before: Range{Min: 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":3,"op":"UPDATE","at":"watch","before":{"min":0,"max":null},"maySkip":false,"after":{"max":0}}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}
