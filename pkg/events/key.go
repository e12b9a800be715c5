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
// plain Event is its group (without file) plus what happened: the
// occurrence's key (Occurrence.Key) when it has one, its message otherwise.
// A combined Event is its group (with file) alone, so every later similar
// occurrence lands on it.
type eventKey struct {
	group    groupKey
	key      string
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

// plainKey is the key of o's own Event in group g: by o.Key, so that
// rewording, hedges and random names do not split it, or by the message
// for an occurrence that has no key.
func plainKey(g groupKey, o *Occurrence) eventKey {
	g.file = ""
	if o.Key != "" {
		return eventKey{group: g, key: o.Key}
	}
	return eventKey{group: g, message: o.Message}
}

// identity is what tells o's Event from the others of its group: its key,
// or its message when it has none.
func identity(o *Occurrence) string {
	if o.Key != "" {
		return o.Key
	}
	return o.Message
}

func combinedKey(g groupKey) eventKey {
	return eventKey{group: g, combined: true}
}
