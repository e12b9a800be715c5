package model

import (
	"maps"
	"slices"
	"strings"
)

// Kubelet is the port's whole state for one source: its file source and
// its merge.
type Kubelet struct {
	Source  *FileSource
	Storage *Storage
}

// NewKubelet is a kubelet that has not listed the folder yet.
func NewKubelet() *Kubelet {
	return &Kubelet{Source: NewFileSource(), Storage: NewStorage()}
}

func (k *Kubelet) clone() *Kubelet {
	return &Kubelet{
		Source:  &FileSource{store: maps.Clone(k.Source.store), fileKeyMapping: maps.Clone(k.Source.fileKeyMapping)},
		Storage: &Storage{pods: maps.Clone(k.Storage.pods), seen: k.Storage.seen, strays: k.Storage.strays},
	}
}

// Running is the identity of the pod the merge holds for key ("" for
// none): its UID and semantic content, which change exactly when the
// kubelet restarts or updates it.
func (k *Kubelet) Running(key string) string {
	if p, ok := k.held(key); ok {
		return p.identity()
	}
	return ""
}

// held is the pod the merge holds for key. Every update the merge takes
// is the store's whole list, and the store changes only with one, so the
// pod held for a key is the one of the UID the store gives it, found
// without a look at every pod, unless a pod strays (Storage.strays).
func (k *Kubelet) held(key string) (Pod, bool) {
	if !k.Storage.strays {
		if s, ok := k.Source.store[key]; ok {
			if p, ok := k.Storage.pods[s.UID]; ok && p.Key == key {
				return p, true
			}
		}
		return Pod{}, false
	}
	for _, p := range k.Storage.pods {
		if p.Key == key {
			return p, true
		}
	}
	return Pod{}, false
}

// fingerprint tells two states apart exactly when they differ.
func (k *Kubelet) fingerprint(b *strings.Builder) {
	for _, key := range slices.Sorted(maps.Keys(k.Source.store)) {
		p := k.Source.store[key]
		b.WriteString(key + "\x00" + p.UID + "\x00" + p.Semantic + "\x00" + p.File + "\x01")
	}
	b.WriteByte(2)
	for _, f := range slices.Sorted(maps.Keys(k.Source.fileKeyMapping)) {
		b.WriteString(f + "\x00" + k.Source.fileKeyMapping[f] + "\x01")
	}
	b.WriteByte(2)
	for _, uid := range slices.Sorted(maps.Keys(k.Storage.pods)) {
		p := k.Storage.pods[uid]
		b.WriteString(uid + "\x00" + p.Semantic + "\x01")
	}
	if k.Storage.seen {
		b.WriteByte(3)
	}
}
