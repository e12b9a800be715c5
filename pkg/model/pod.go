package model

import (
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

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
	// Seen is, for a pod the merge holds, when it first took the pod's
	// UID in (recordFirstSeenTime's annotation), as the input it came
	// with is dated (Input.At); zero when that is not known. Two states
	// that differ only in it are one: podwatch cannot tell them apart.
	Seen time.Time
}

// identity is what Kubelet.Running says of p: its UID, then its
// semantic content, which change exactly when the kubelet restarts or
// updates it.
func (p Pod) identity() string { return p.UID + "\x00" + p.Semantic }

// SemanticOf is the semantic content in an identity of Kubelet.Running
// or End.Runs, "" for none: what follows its last NUL, since a UID
// FromManifest derives holds one.
func SemanticOf(identity string) string {
	return identity[strings.LastIndexByte(identity, 0)+1:]
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
