package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	v1 "k8s.io/api/core/v1"
)

// hashPod hashes the JSON encoding of the defaulted pod. Struct fields are
// written in declaration order, map keys sorted and quantities in canonical
// form, so the hash depends only on what the kubelet would run: not on
// formatting, comments, key order or values spelled out that equal defaults.
func hashPod(pod *v1.Pod) string {
	b, err := json.Marshal(pod)
	if err != nil {
		// A decoded pod always encodes; the fallback keeps Decode total.
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
