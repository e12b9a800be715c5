package events

// Keys are structs of strings rather than joined strings: building one costs
// no allocation, and the map hashes the fields directly. Source component
// and host are the same for every Event of a Recorder, so they are left out.

// objectKey is the involved object as correlation sees it. ResourceVersion
// is left out, as in client-go: it changes on every write of the object.
type objectKey struct {
	kind, namespace, name, uid, apiVersion, fieldPath string
}

// groupKey is an aggregation group: one object, type and reason, plus the
// file for file-scoped reasons.
type groupKey struct {
	object      objectKey
	typ, reason string
	file        string
}

// eventKey identifies one Event: the Event minus timestamps and count. A
// plain Event is its group (without file) plus its message; a combined
// Event is its group (with file) and no message, so every later similar
// occurrence lands on it.
type eventKey struct {
	group    groupKey
	message  string
	combined bool
}

func objectKeyOf(o *Occurrence) objectKey {
	r := &o.Object
	return objectKey{
		kind: r.Kind, namespace: r.Namespace, name: r.Name,
		uid: string(r.UID), apiVersion: r.APIVersion, fieldPath: r.FieldPath,
	}
}

func groupKeyOf(o *Occurrence) groupKey {
	g := groupKey{object: objectKeyOf(o), typ: o.Type, reason: o.Reason}
	if fileScoped(o.Reason) {
		g.file = o.File
	}
	return g
}

func plainKey(g groupKey, message string) eventKey {
	g.file = ""
	return eventKey{group: g, message: message}
}

func combinedKey(g groupKey) eventKey {
	return eventKey{group: g, combined: true}
}
