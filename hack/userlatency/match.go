package main

import (
	"encoding/json"
	"strconv"
	"strings"
)

// addedEvent is the part of a v1 Event line that says which pod was added.
type addedEvent struct {
	Reason         string `json:"reason"`
	InvolvedObject struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"involvedObject"`
}

// addedPod returns the static pod a StaticPodAdded Event line is about
// (its name with the node's suffix, as the kubelet names it); ok is false
// for any other line.
func addedPod(line []byte) (namespace, name string, ok bool) {
	var ev addedEvent
	if json.Unmarshal(line, &ev) != nil || ev.Reason != "StaticPodAdded" || ev.InvolvedObject.Kind != "Pod" {
		return "", "", false
	}
	return ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, true
}

// isAdded reports whether line is podwatch's StaticPodAdded Event for the
// static pod namespace/name.
func isAdded(line []byte, namespace, name string) bool {
	ns, n, ok := addedPod(line)
	return ok && ns == namespace && n == name
}

// floorLine is the floor watcher's line for a file it read: the file's name
// and its size.
func floorLine(file string, size int) string {
	return file + " " + strconv.Itoa(size)
}

// isFloor reports whether line is the floor watcher's line for file.
func isFloor(line []byte, file string) bool {
	got, _, ok := strings.Cut(strings.TrimRight(string(line), "\n"), " ")
	return ok && got == file
}
