package types

import (
	"encoding/json"
	"testing"
)

func TestRangeExact(t *testing.T) {
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
