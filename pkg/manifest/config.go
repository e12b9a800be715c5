package manifest

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/dump"
)

// configIdentity identifies a decoded, defaulted pod the way the kubelet's
// config hash does, before the file source gives it its static-pod name,
// namespace, node and toleration: the kubelet hashes a deep print of the
// pod at that point, in which an empty list differs from none and a
// quantity keeps the form it was written in, so such edits restart the pod
// although the API would see no change.
//
// It is an equivalence, not the kubelet's hash: the kubelet prints its
// internal pod type, podwatch the v1 type it decodes into. Two manifests
// have the same identity exactly when, at one path on one node, the kubelet
// gives them one UID; test/tools holds podwatch to that on edit pairs and
// under fuzzing.
func configIdentity(pod *v1.Pod, nodeName string) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "%v", dump.ForHash(pod))
	fmt.Fprintf(h, "host:%s", nodeName)
	return hex.EncodeToString(h.Sum(nil))
}
