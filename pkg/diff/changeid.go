package diff

import "github.com/podwatch/podwatch/pkg/types"

// changeID is types.Change.ID: a digest of the pod key, the Op and the pod
// the change publishes (f; nil for a REMOVE). It leaves out where the change
// comes from on purpose: after a kill that lost several changes of one pod,
// the restart's single net change leads where the last one lost did, and so
// is recognised as already recorded. The state it moves from cannot be
// what tells two real occurrences apart either, because a restart restores
// exactly that state; what does is that consecutive changes of one pod
// never lead to the same place (an ADD is followed by an UPDATE or REMOVE,
// and an UPDATE changes the file, the content or the restart identity).
//
// 128 bits: a change is only ever compared with the last one of its pod.
func changeID(key string, op types.Op, f *types.File) string {
	if f == nil || f.Pod == nil {
		return digestOf(16, key, string(op))
	}
	return digestOf(16, key, string(op), f.Name, f.Pod.Hash, f.Pod.Config, string(f.Pod.UID))
}
