package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// encodePod returns the canonical encoding of the defaulted pod and its hash.
// Struct fields are written in declaration order, map keys sorted and
// quantities in canonical form, so the hash depends only on what the kubelet
// would run: not on formatting, comments, key order or values spelled out
// that equal defaults.
func encodePod(pod *v1.Pod) ([]byte, string, error) {
	b, err := json.Marshal(pod)
	if err != nil {
		return nil, "", fmt.Errorf("manifest: encode decoded pod: %w", err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:16]), nil
}

// containerList names the regular containers as "name=image".
func containerList(pod *v1.Pod) []string {
	out := make([]string, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		out[i] = c.Name + "=" + c.Image
	}
	return out
}
