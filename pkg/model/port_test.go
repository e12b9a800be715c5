package model

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// folder is what the port's reads see: a pod per path, or an error.
type folder map[string]any

func (f folder) read(path string) (Pod, error) {
	switch v := f[path].(type) {
	case Pod:
		return v, nil
	case error:
		return Pod{}, v
	default:
		return Pod{}, fs.ErrNotExist
	}
}

func (f folder) entries() []Entry {
	var es []Entry
	for p := range f {
		es = append(es, Entry{Path: p, Kind: EntryRegular})
	}
	return es
}

func pod(key, cfg string) Pod { return Pod{Key: key, Semantic: cfg} }

// uid is the UID of a pod without metadata.uid, as FromManifest derives it.
func withUID(p Pod, path string) Pod {
	p.UID = path + "\x00" + p.Semantic
	return p
}

// say renders the merge's PodUpdates as the kubelet's log names them.
func say(pus []PodUpdate) string {
	var out []string
	for _, pu := range pus {
		var ps []string
		for _, p := range pu.Pods {
			ps = append(ps, base(p.File)+"@"+p.Semantic)
		}
		out = append(out, fmt.Sprintf("%s[%s]", pu.Op, strings.Join(ps, ",")))
	}
	return strings.Join(out, " ")
}

// rig holds a folder and a port of the kubelet over it.
type rig struct {
	t   *testing.T
	f   folder
	src *FileSource
	st  *Storage
}

func newRig(t *testing.T) *rig {
	return &rig{t: t, f: folder{}, src: NewFileSource(), st: NewStorage()}
}

// put writes path: a pod of key and config, or an error ("invalid").
func (r *rig) put(path string, v any) {
	if p, ok := v.(Pod); ok {
		v = withUID(p, path)
	}
	r.f[path] = v
}

func (r *rig) merge(u *Update) string {
	if u == nil {
		return ""
	}
	return say(r.st.Merge(u))
}

func (r *rig) relist() string {
	u, _ := r.src.ListConfig(true, r.f.entries(), r.f.read)
	return r.merge(u)
}

func (r *rig) event(path string, op FsOp) string {
	e, ok := ProduceWatchEvent(path, op)
	if !ok {
		return ""
	}
	u, _ := r.src.ConsumeWatchEvent(e, r.f.read)
	return r.merge(u)
}

func (r *rig) want(step, got, want string) {
	r.t.Helper()
	if got != want {
		r.t.Errorf("%s: the kubelet sends %q, want %q", step, got, want)
	}
}

// The .bak sorts last and wins at a relist; a write of the shadowed file
// wins on the watch until the next relist takes the .bak back.
func TestBackupWinsAtRelistShadowedWinsOnWatch(t *testing.T) {
	r := newRig(t)
	r.put("m/etcd.yaml", pod("kube-system/etcd", "v2"))
	r.put("m/etcd.yaml.bak", pod("kube-system/etcd", "v1"))
	r.want("first relist", r.relist(), "ADD[etcd.yaml.bak@v1]")
	r.put("m/etcd.yaml", pod("kube-system/etcd", "v3"))
	r.want("write of etcd.yaml", r.event("m/etcd.yaml", Write), "REMOVE[etcd.yaml.bak@v1] ADD[etcd.yaml@v3]")
	r.want("next relist", r.relist(), "REMOVE[etcd.yaml@v3] ADD[etcd.yaml.bak@v1]")
	r.want("unchanged relist", r.relist(), "")
}

// An invalid write changes nothing; the deletion of a file drops the pod
// its name last gave, whichever file that pod comes from now.
func TestInvalidKeepsDeleteDropsByMapping(t *testing.T) {
	r := newRig(t)
	r.put("m/a.yaml", pod("ns/web", "v1"))
	r.put("m/b.yaml", pod("ns/web", "v2"))
	r.want("first relist", r.relist(), "ADD[b.yaml@v2]")
	r.put("m/b.yaml", errors.New("line 3: invalid"))
	r.want("invalid write", r.event("m/b.yaml", Write), "")
	r.want("relist", r.relist(), "REMOVE[b.yaml@v2] ADD[a.yaml@v1]")
	delete(r.f, "m/b.yaml")
	r.want("b.yaml deleted", r.event("m/b.yaml", Remove), "REMOVE[a.yaml@v1]")
	r.want("relist", r.relist(), "ADD[a.yaml@v1]")
}

// A relist that finds no valid file sends an empty list and keeps its
// store: the next change of the store sends all of it again.
func TestEmptyRelistKeepsTheStore(t *testing.T) {
	r := newRig(t)
	r.put("m/a.yaml", pod("ns/a", "v1"))
	r.want("first relist", r.relist(), "ADD[a.yaml@v1]")
	r.put("m/a.yaml", errors.New("invalid"))
	r.want("relist of an invalid folder", r.relist(), "REMOVE[a.yaml@v1]")
	r.put("m/b.yaml", pod("ns/b", "v1"))
	r.want("b.yaml created", r.event("m/b.yaml", Create), "ADD[a.yaml@v1,b.yaml@v1]")
}

// A delete of a file whose key the store no longer holds is an error that
// keeps the file's mapping.
func TestDeleteOfAKeyGoneKeepsTheMapping(t *testing.T) {
	r := newRig(t)
	r.put("m/a.yaml", pod("ns/a", "v1"))
	r.put("m/b.yaml", pod("ns/a", "v2"))
	r.relist()
	delete(r.f, "m/b.yaml")
	r.want("b.yaml deleted", r.event("m/b.yaml", Remove), "REMOVE[b.yaml@v2]")
	e, _ := ProduceWatchEvent("m/a.yaml", Rename)
	if u, err := r.src.ConsumeWatchEvent(e, r.f.read); u != nil || err == nil {
		t.Errorf("a.yaml renamed away after its key was dropped: sends %v, err %v; want nothing and an error", u, err)
	}
	if _, ok := r.src.fileKeyMapping["m/a.yaml"]; !ok {
		t.Errorf("the failed delete dropped a.yaml's mapping")
	}
}

// A pod whose manifest sets metadata.uid keeps it across files and edits:
// a semantic change is the kubelet's UPDATE, not a REMOVE and ADD.
func TestManifestUIDIsAnUpdate(t *testing.T) {
	r := newRig(t)
	p := pod("ns/a", "v1")
	p.UID = "fixed"
	r.f["m/a.yaml"] = p
	r.want("first relist", r.relist(), "ADD[a.yaml@v1]")
	p.Semantic = "v2"
	r.f["m/a.yaml"] = p
	r.want("write", r.event("m/a.yaml", Write), "UPDATE[a.yaml@v2]")
	r.want("same content again", r.event("m/a.yaml", Chmod), "")
}

// The first update of the source is sent even when it adds nothing.
func TestFirstEmptyListIsAnEmptyAdd(t *testing.T) {
	r := newRig(t)
	got := r.st.Merge(&Update{Pods: []Pod{}})
	if !slices.EqualFunc(got, []PodUpdate{{Op: KubeletAdd}}, func(a, b PodUpdate) bool { return a.Op == b.Op && len(a.Pods) == len(b.Pods) }) {
		t.Errorf("first empty update: %v, want one empty ADD", got)
	}
	if got := r.st.Merge(&Update{Pods: []Pod{}}); len(got) != 0 {
		t.Errorf("second empty update: %v, want nothing", got)
	}
}

func TestProduceWatchEvent(t *testing.T) {
	for _, c := range []struct {
		path string
		op   FsOp
		want EventType
		ok   bool
	}{
		{"m/a.yaml", Create, PodAdd, true},
		{"m/a.yaml", Create | Write, PodAdd, true},
		{"m/a.yaml", Write, PodModify, true},
		{"m/a.yaml", Chmod, PodModify, true},
		{"m/a.yaml", Write | Remove, PodModify, true},
		{"m/a.yaml", Remove, PodDelete, true},
		{"m/a.yaml", Rename, PodDelete, true},
		{"m/.a.yaml.swp", Create, 0, false},
		{"m/a.yaml", 0, 0, false},
	} {
		e, ok := ProduceWatchEvent(c.path, c.op)
		if ok != c.ok || (ok && (e.Type != c.want || e.Path != c.path)) {
			t.Errorf("ProduceWatchEvent(%s, %b) = %+v, %v; want type %d, %v", c.path, c.op, e, ok, c.want, c.ok)
		}
	}
}

// A missing folder sends an empty list, at a relist and on the watch.
func TestMissingFolderSendsEmpty(t *testing.T) {
	src := NewFileSource()
	u, err := src.ListConfig(false, nil, folder{}.read)
	if u == nil || len(u.Pods) != 0 || !errors.Is(err, ErrPathMissing) {
		t.Errorf("ListConfig of a missing folder = %v, %v", u, err)
	}
	u, err = src.DoWatchMissing()
	if u == nil || len(u.Pods) != 0 || !errors.Is(err, ErrPathMissing) {
		t.Errorf("DoWatchMissing = %v, %v", u, err)
	}
}
