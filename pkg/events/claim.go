package events

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
)

// AnnotationClaim is on an Event that reports a change with a claim
// (Occurrence.Claim): the claim of its latest occurrence, as compact JSON
// (types.Claim), so that whoever reads the Event, in any sink, has what
// the change says of the kubelet as data rather than words.
const AnnotationClaim = "podwatch.io/claim"

// claimJSON is c as AnnotationClaim's value, "" for none. A Claim is
// plain data, so encoding it cannot fail; should it, the Event goes out
// without the annotation rather than not at all.
func claimJSON(c *types.Claim) string {
	if c == nil {
		return ""
	}
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}

// LastClaimID is the highest claim ID among evs' AnnotationClaim, 0 for
// none: where a restart's numbering of claims goes on from when the
// published state lost its count (state.json lost, or not yet saved).
func LastClaimID(evs []v1.Event) uint64 {
	var last uint64
	for i := range evs {
		raw, ok := evs[i].Annotations[AnnotationClaim]
		if !ok {
			continue
		}
		var c types.Claim
		if json.Unmarshal([]byte(raw), &c) == nil {
			last = max(last, c.ID)
		}
	}
	return last
}
