package model

import "github.com/podwatch/podwatch/pkg/types"

// Pod is a static pod as the kubelet's file source and merge hold it, the
// fields they act on and nothing else.
type Pod struct {
	// Key is "<namespace>/<name>" after defaulting: the store's key
	// (cache.MetaNamespaceKeyFunc), and the pod's full name for the merge's
	// check of duplicate names.
	Key string
	// UID is the pod's UID after applyDefaults: metadata.uid, or one
	// derived from the content, the node and the file's path.
	UID string
	// Semantic stands for what podsDifferSemantically compares (spec,
	// labels, the deletion fields, the annotations the kubelet does not
	// set): two pods of one UID differ semantically exactly when their
	// Semantic does.
	Semantic string
	// File is the path the pod was read from (its config source
	// annotation).
	File string
}

// FromManifest is the pod the kubelet makes of a manifest at path that
// pkg/manifest decoded to p. Its UID is metadata.uid, or else stands for
// the one applyDefaults derives: p.Config and the path, equal exactly
// when the kubelet's are. Semantic is p.Config too, which differs with
// every semantic difference; it also differs with a status a manifest
// changes, which the kubelet only reconciles.
func FromManifest(p *types.Pod, path string) Pod {
	uid := string(p.UID)
	if uid == "" {
		uid = path + "\x00" + p.Config
	}
	return Pod{Key: p.Key, UID: uid, Semantic: p.Config, File: path}
}
