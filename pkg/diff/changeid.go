package diff

import (
	"crypto/sha256"
	"encoding/base64"

	"github.com/podwatch/podwatch/pkg/types"
)

// changeID is types.Change.ID: a digest of the pod key, the Op and the pod
// the change publishes (f; nil for a REMOVE). It leaves out where the change
// comes from on purpose: after a kill that lost several changes of one pod,
// the restart's single net change leads where the last one lost did, and so
// is recognised as already recorded. The state it moves from cannot be
// what tells two real occurrences apart either, because a restart restores
// exactly that state; what does is that consecutive changes of one pod
// never lead to the same place (an ADD is followed by an UPDATE or REMOVE,
// and an UPDATE changes the file, the content or the restart identity).
func changeID(key string, op types.Op, f *types.File) string {
	h := sha256.New()
	write := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	write(key)
	write(string(op))
	if f != nil && f.Pod != nil {
		write(f.Name)
		write(f.Pod.Hash)
		write(f.Pod.Config)
		write(string(f.Pod.UID))
	}
	var sum [sha256.Size]byte
	// 128 bits: a change is only ever compared with the last one of its
	// pod, so this is far past any chance of two colliding.
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}
