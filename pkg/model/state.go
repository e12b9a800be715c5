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
		Storage: &Storage{pods: maps.Clone(k.Storage.pods), seen: k.Storage.seen},
	}
}

// Running is the identity of the pod the merge holds for key ("" for
// none): its UID and semantic content, which change exactly when the
// kubelet restarts or updates it.
func (k *Kubelet) Running(key string) string {
	for _, p := range k.Storage.pods {
		if p.Key == key {
			return p.identity()
		}
	}
	return ""
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
