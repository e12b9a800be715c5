package events

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ptypes "github.com/podwatch/podwatch/pkg/types"
)

// Component is the source component of every Event podwatch records.
const Component = "podwatch"

// AnnotationFile names the manifest file on Events of file-scoped reasons.
// Their messages already say it for people; the annotation lets a restart
// put a restored Event back into its file's aggregation group.
const AnnotationFile = "podwatch.io/file"

// AnnotationChange is on an Event that reports a pod change (an
// Occurrence with Change set): "<seq>/<change>", the last change counted on
// it and its place in the order of all changes this node recorded. A restart
// reads it back from the local store or the API to recognise a change it
// recomputes as one already counted (see Recorder.Record).
const AnnotationChange = "podwatch.io/change"

// AnnotationKey is on an Event counted by a key (Occurrence.Key): the key
// itself, which a restart reads back, from the local store or the API, so
// that an occurrence of the same thing continues the Event however this
// release or the one before words it.
const AnnotationKey = "podwatch.io/key"

// AnnotationDetail is on an Event whose occurrence has a Detail: what its
// message leaves out so that it reads at a glance (the full list of fields
// changed, the races, the proof of an estimate), for podwatch events and
// whoever reads the Event's JSON.
const AnnotationDetail = "podwatch.io/detail"

// CombinedPrefix starts the message of an Event that stands for many
// similar ones, as in client-go.
const CombinedPrefix = "(combined from similar events): "

// MaxMessage bounds an Event's message in bytes, as the events.k8s.io API
// bounds a note: a message built from hostile input (thousands of field
// errors) must not make an Event the API server refuses or a `kubectl
// describe` nobody can read.
const MaxMessage = 1024

// capMessage cuts msg to MaxMessage bytes on a UTF-8 boundary, saying so.
func capMessage(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	const mark = " [truncated]"
	cut := MaxMessage - len(mark)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + mark
}

// Occurrence is one happening to record.
type Occurrence struct {
	Object  v1.ObjectReference
	Type    string // Normal or Warning
	Reason  string
	Message string
	// Detail is what Message leaves out (AnnotationDetail), empty when
	// nothing; an Event says its latest occurrence's.
	Detail string
	// File is the base name of the manifest concerned, empty when none. For
	// file-scoped reasons (InvalidManifest, ManifestIgnoredContent,
	// ManifestUnreadable) it separates aggregation groups, so ten broken
	// files stay ten Events while one file whose error keeps changing is
	// combined.
	File string
	// Key identifies what happened, within its object, type and reason,
	// apart from how the message words it: for a pod change its transition
	// (the file and the config it moves from and to), for a problem its
	// files and the kind of fault. Occurrences with one Key are counted on
	// one Event, whose message follows the latest of them; hedges and
	// random names (an editor's temp file) never enter it. Empty: the
	// message is the key.
	Key string
	// Change identifies the pod change reported (types.Change.ID), empty
	// for anything else. An occurrence whose Change is the one last counted
	// for its object before a restart is a replay: it is not counted again.
	Change string
	// Claim is what the change says of the kubelet as data
	// (types.Change.Claim), nil for anything else; the Event carries its
	// latest occurrence's as AnnotationClaim.
	Claim *ptypes.Claim
}

// PodRef refers to a static pod (its mirror pod in the API).
func PodRef(namespace, name string) v1.ObjectReference {
	return v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: name}
}

// NodeRef refers to the node. kubectl describe node matches events by
// uid = node name, as the kubelet records them.
func NodeRef(node string) v1.ObjectReference {
	return v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node, UID: types.UID(node)}
}

// fileScoped reports whether the manifest file is part of a reason's
// aggregation group: these reasons describe one file each, and messages of
// different files must not count as "similar".
func fileScoped(reason string) bool {
	switch reason {
	case "InvalidManifest", "ManifestIgnoredContent", "ManifestUnreadable":
		return true
	}
	return false
}

// eventNamespace is where an Event about obj lives: the object's namespace,
// or default for cluster-scoped objects such as the node.
func eventNamespace(obj v1.ObjectReference) string {
	if obj.Namespace != "" {
		return obj.Namespace
	}
	return metav1.NamespaceDefault
}

// eventName names an Event as client-go does, "<object>.<hex unix nanos>".
func eventName(object string, nanos int64) string {
	var b strings.Builder
	b.Grow(len(object) + 17)
	b.WriteString(object)
	b.WriteByte('.')
	var buf [17]byte
	b.Write(strconv.AppendInt(buf[:0], nanos, 16))
	return b.String()
}

// nameNanos returns the hex suffix of an Event name, or 0.
func nameNanos(name string) int64 {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return 0
	}
	n, err := strconv.ParseInt(name[i+1:], 16, 64)
	if err != nil {
		return 0
	}
	return n
}

// entry is one Event being counted. Fields are guarded by the Recorder's
// mutex; an entry evicted from the cache lives on while writes of it are
// pending, but nothing changes it any more.
type entry struct {
	object  v1.ObjectReference
	typ     string
	reason  string
	message string // current message; a combined Event takes the latest
	detail  string // the latest occurrence's Detail, for AnnotationDetail
	file    string // set for file-scoped reasons, for AnnotationFile
	key     string // Occurrence.Key of a plain Event, for AnnotationKey
	name    string
	first   time.Time
	last    time.Time
	count   int32
	// change is the last change counted on this Event; mark is its
	// AnnotationChange value, made once when the change is counted rather
	// than at every write.
	change string
	mark   string
	// claim is AnnotationClaim's value: the latest occurrence's claim.
	claim string
	// slots holds this Event's state per delivered sink, by sink index.
	slots []slot
}

// event builds the v1 Event as it stands. Each call returns a fresh value
// that the sink may keep.
func (e *entry) event(host string) *v1.Event {
	ev := &v1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      e.name,
			Namespace: eventNamespace(e.object),
		},
		InvolvedObject:      e.object,
		Reason:              e.reason,
		Message:             e.message,
		Type:                e.typ,
		Source:              v1.EventSource{Component: Component, Host: host},
		FirstTimestamp:      metav1.NewTime(e.first),
		LastTimestamp:       metav1.NewTime(e.last),
		Count:               e.count,
		ReportingController: Component,
		ReportingInstance:   Component + "-" + host,
	}
	if e.file != "" || e.mark != "" || e.key != "" || e.claim != "" || e.detail != "" {
		ev.Annotations = make(map[string]string, 3)
	}
	if e.claim != "" {
		ev.Annotations[AnnotationClaim] = e.claim
	}
	if e.detail != "" {
		ev.Annotations[AnnotationDetail] = e.detail
	}
	if e.file != "" {
		ev.Annotations[AnnotationFile] = e.file
	}
	if e.mark != "" {
		ev.Annotations[AnnotationChange] = e.mark
	}
	if e.key != "" {
		ev.Annotations[AnnotationKey] = e.key
	}
	return ev
}

// changeMark is AnnotationChange's value.
func changeMark(seq uint64, change string) string {
	return strconv.FormatUint(seq, 10) + "/" + change
}

// parseChangeMark reads AnnotationChange's value; ok is false when it is
// not one.
func parseChangeMark(v string) (seq uint64, change string, ok bool) {
	n, change, found := strings.Cut(v, "/")
	if !found || change == "" {
		return 0, "", false
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return 0, "", false
	}
	return seq, change, true
}
