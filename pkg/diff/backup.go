package diff

// An editor's backup by rename (vim: the manifest renamed to NAME~, the
// new content written to NAME, NAME~ deleted once the write is done) may
// live for microseconds: podwatch, reading after the events, finds it
// gone. The kubelet reads it on its event if it gets there first, and
// then runs the old content from it (a restart, and another to the new
// write), and the backup's deletion drops the pod its name last gave,
// which is the new write's by then, until the next relist starts it again.
// Whether it got there first is a race; the events tell podwatch only that
// it may have. maybeRead holds, per name moved in unread just as a name of
// a known pod went (a rename of it), that pod's key; mayDrop holds, per
// key, the name whose deletion may have dropped the pod, for the key's
// next message to say (see computation.update).

// renamedIn notes that name, moved in unread just as a name giving key's
// pod went, may have given the kubelet that pod.
func (v *kubeletView) renamedIn(name, key string) {
	if v.maybeRead == nil {
		v.maybeRead = map[string]string{}
	}
	v.maybeRead[name] = key
}

// unreadGone takes in name's going when podwatch never read it: if the
// kubelet may have read a pod from it that its store still holds from
// another file, it may have dropped that pod now, and restarted it to
// name's content on the way.
func (v *kubeletView) unreadGone(name string) {
	key, ok := v.maybeRead[name]
	if !ok {
		return
	}
	delete(v.maybeRead, name)
	if held, ok := v.store[key]; !ok || held == name || v.empty {
		return
	}
	v.owe(key, name)
	if v.mayDrop == nil {
		v.mayDrop = map[string]string{}
	}
	v.mayDrop[key] = name
}
