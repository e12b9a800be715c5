package diff

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io/fs"
	"syscall"

	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/podwatch/podwatch/pkg/manifest"
	"github.com/podwatch/podwatch/pkg/types"
)

// keyOf is types.Change.Key: a digest of parts, so that a key stays short
// in an Event's annotation whatever the file names, and two parts cannot
// run into each other.
// 96 bits: a key is only compared within one object and reason.
func keyOf(parts ...string) string { return digestOf(12, parts...) }

// digestOf is the first n bytes of a digest of parts, each ended by a NUL.
func digestOf(n int, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:n])
}

// podIdentity is a published pod as a transition key sees it: the file the
// kubelet takes it from and the config it runs (content, config hash and
// restart identity), never the words of a message.
func podIdentity(file, hash, config string, uid ktypes.UID) string {
	return file + "\x00" + hash + "\x00" + config + "\x00" + string(uid)
}

func (p PodState) identity() string { return podIdentity(p.File, p.Hash, p.Config, p.UID) }

func fileIdentity(f *types.File) string {
	return podIdentity(f.Name, f.Pod.Hash, f.Pod.Config, f.Pod.UID)
}

// transition is the Key of a pod change: its reason, the file it names and
// the pod's identity before and after ("" for none). An edit flipped back
// and forth is two transitions, each counted on its own Event.
func transition(reason, file, from, to string) string {
	return keyOf("transition", reason, file, from, to)
}

// problemKey is the Key of a problem: what it is about (the problem's id,
// which names its file or pod), the files involved, and the kind of fault.
func problemKey(id, fault string, files ...string) string {
	return keyOf(append([]string{"problem", id, fault}, files...)...)
}

// fault classes a problem's error coarsely: the OS error's name for a
// failed read or watch, whether a manifest is too big or too complex for
// the kubelet, and "content" for anything else a manifest's text gets
// wrong. The error's text never enters a key: it changes with each typo
// while the file stays one problem.
func fault(err error) string {
	var errno syscall.Errno
	var merr *manifest.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, manifest.ErrTooLarge):
		return "too-large"
	case errors.Is(err, manifest.ErrTooComplex):
		return "too-complex"
	case errors.As(err, &merr):
		return "content"
	case errors.Is(err, fs.ErrNotExist):
		return "not-exist"
	case errors.As(err, &errno):
		return errno.Error()
	}
	return "other"
}
