package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var testOpts = Options{NodeName: "node-1", Path: "/etc/kubernetes/manifests", SettleDelay: time.Second, RelistPeriod: 20 * time.Second}

// pod builds a decoded manifest the way manifest.Decode would leave it.
func pod(name, image string, mutate ...func(*v1.Pod)) *types.Pod {
	p := &v1.Pod{}
	p.Name = name + "-node-1"
	p.Namespace = "kube-system"
	p.Spec.NodeName = "node-1"
	p.Spec.Containers = []v1.Container{{Name: name, Image: image}}
	for _, m := range mutate {
		m(p)
	}
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	var containers []string
	for _, c := range p.Spec.Containers {
		containers = append(containers, c.Name+"="+c.Image)
	}
	hash := hex.EncodeToString(sum[:8])
	// Config follows the content unless a test restyles it (restyled).
	return &types.Pod{Key: p.Namespace + "/" + p.Name, Hash: hash, Config: "cfg-" + hash, UID: p.UID, Containers: containers, JSON: b}
}

// restyled is p as the same pod written another way: what the API sees is
// the same (Hash), the kubelet's config hash is not (Config).
func restyled(p *types.Pod) *types.Pod {
	q := *p
	q.Config += "-restyled"
	return &q
}

func valid(name string, p *types.Pod, changed time.Time) types.File {
	return types.File{Name: name, Path: "/m/" + name, Pod: p, ChangedAt: changed, Complete: true}
}

func snap(relist bool, files ...types.File) types.Snapshot {
	return types.Snapshot{Time: t0, Relist: relist, Path: "/m", Files: ptrs(files), Watch: types.WatchStatus{Up: true}}
}

// ptrs gives each file its own pointer, as the source's snapshots hold them.
func ptrs(files []types.File) []*types.File {
	out := make([]*types.File, len(files))
	for i := range files {
		f := files[i]
		out[i] = &f
	}
	return out
}

// publishedState runs Compute until nothing is pending, returning the state.
func publishedState(t testing.TB, s types.Snapshot) State {
	t.Helper()
	_, st, recheck := Compute(State{}, s, t0.Add(time.Hour), testOpts)
	if !recheck.IsZero() {
		t.Fatalf("setup left something pending until %v", recheck)
	}
	return st
}

func reasons(chs []types.Change) string {
	var rs []string
	for _, c := range chs {
		rs = append(rs, c.Reason)
	}
	return strings.Join(rs, ",")
}

func mustOne(t *testing.T, chs []types.Change, reason string) types.Change {
	t.Helper()
	if len(chs) != 1 || chs[0].Reason != reason {
		t.Fatalf("changes = [%s], want exactly %s\n%+v", reasons(chs), reason, chs)
	}
	return chs[0]
}

func TestAddFromCompleteFileIsImmediate(t *testing.T) {
	s := snap(true, valid("etcd.yaml", pod("etcd", "etcd:3.6"), t0))
	chs, st, recheck := Compute(State{}, s, t0, testOpts)
	c := mustOne(t, chs, types.ReasonAdded)
	if c.Op != types.OpAdd || c.Object != (types.Object{Kind: types.KindPod, Namespace: "kube-system", Name: "etcd-node-1"}) || c.File != "etcd.yaml" {
		t.Fatalf("add change = %+v", c)
	}
	if c.Message != "etcd.yaml: the kubelet starts the pod (etcd:3.6)" || !strings.Contains(c.Detail, "etcd=etcd:3.6") {
		t.Fatalf("message = %q", c.Message)
	}
	if !recheck.IsZero() || st.Pods["kube-system/etcd-node-1"].File != "etcd.yaml" {
		t.Fatalf("recheck=%v state=%+v", recheck, st)
	}
}

func TestIncompleteFileWaitsToSettle(t *testing.T) {
	f := valid("etcd.yaml", pod("etcd", "etcd:3.6"), t0)
	f.Complete = false
	s := snap(false, f)
	chs, st, recheck := Compute(State{}, s, t0.Add(300*time.Millisecond), testOpts)
	if len(chs) != 0 || !recheck.Equal(t0.Add(time.Second)) {
		t.Fatalf("changes=[%s] recheck=%v, want none until %v", reasons(chs), recheck, t0.Add(time.Second))
	}
	chs, _, recheck = Compute(st, s, recheck, testOpts)
	mustOne(t, chs, types.ReasonAdded)
	if !recheck.IsZero() {
		t.Fatalf("recheck after settling = %v", recheck)
	}
}

func TestUpdateNamesFieldsAndEffect(t *testing.T) {
	st := publishedState(t, snap(true, valid("kube-apiserver.yaml", pod("kube-apiserver", "kube-apiserver:v1.37.1"), t0)))
	cur := pod("kube-apiserver", "kube-apiserver:v1.37.2")
	chs, st2, _ := Compute(st, snap(false, valid("kube-apiserver.yaml", cur, t0.Add(time.Minute))), t0.Add(time.Minute), testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if want := "kube-apiserver.yaml: image v1.37.1 → v1.37.2: the kubelet restarts the pod (new UID)"; c.Message != want {
		t.Fatalf("message %q, want %q", c.Message, want)
	}
	want := "spec.containers[kube-apiserver].image: kube-apiserver:v1.37.1 -> kube-apiserver:v1.37.2"
	if !strings.Contains(c.Detail, want) || !strings.Contains(c.Detail, "new UID and restarts") {
		t.Fatalf("detail %q lacks %q or the restart note", c.Detail, want)
	}
	if st2.Pods["kube-system/kube-apiserver-node-1"].Hash != cur.Hash {
		t.Fatal("state not moved to the new hash")
	}
}

func TestUpdateInPlaceWhenUIDPinned(t *testing.T) {
	pin := func(p *v1.Pod) { p.UID = ktypes.UID("fixed") }
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1", pin), t0)))
	chs, st, _ := Compute(st, snap(false, valid("a.yaml", pod("a", "img:2", pin), t0)), t0, testOpts)
	if c := mustOne(t, chs, types.ReasonUpdated); !strings.Contains(c.Message, "in place") {
		t.Fatalf("message %q does not say in place", c.Message)
	}
	// Only metadata outside spec/labels/annotations: the kubelet sees nothing.
	gen := func(p *v1.Pod) { p.GenerateName = "x" }
	chs, _, _ = Compute(st, snap(false, valid("a.yaml", pod("a", "img:2", pin, gen), t0)), t0, testOpts)
	if len(chs) != 0 {
		t.Fatalf("pinned uid, no semantic change: changes [%s]", reasons(chs))
	}
}

// An edit the API would not see (an empty list written out, a quantity
// respelt) still gives the kubelet a new config hash: a restart.
func TestUpdateWhenOnlyConfigChanges(t *testing.T) {
	p := pod("a", "img:1")
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	cur := restyled(p)
	chs, st2, _ := Compute(st, snap(false, valid("a.yaml", cur, t0.Add(time.Minute))), t0.Add(time.Minute), testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if c.Op != types.OpUpdate || !strings.Contains(c.Message, "config hash") || !strings.Contains(c.Message, "restarts the pod (new UID)") {
		t.Fatalf("message %q does not explain the restart", c.Message)
	}
	if got := st2.Pods[p.Key].Config; got != cur.Config {
		t.Fatalf("state keeps config %q, want %q", got, cur.Config)
	}
	// The same restyled file again is no change.
	chs, _, _ = Compute(st2, snap(true, valid("a.yaml", cur, t0.Add(time.Minute))), t0.Add(2*time.Minute), testOpts)
	if len(chs) != 0 {
		t.Fatalf("unchanged restyled file: [%s]", reasons(chs))
	}
}

// With metadata.uid set the kubelet's UID never changes, and it compares
// the pod semantically, where an empty list equals none: no UPDATE.
func TestRestyleWithPinnedUIDIsNoChange(t *testing.T) {
	pin := func(p *v1.Pod) { p.UID = ktypes.UID("fixed") }
	p := pod("a", "img:1", pin)
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	chs, _, _ := Compute(st, snap(false, valid("a.yaml", restyled(p), t0)), t0, testOpts)
	if len(chs) != 0 {
		t.Fatalf("pinned uid, restyled: [%s]", reasons(chs))
	}
}

// A state written before podwatch kept Config decides by Hash once, and
// takes the Config silently: no false restart after an upgrade.
func TestStateWithoutConfigAdoptsItSilently(t *testing.T) {
	p := pod("a", "img:1")
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	old := *st.Pods[p.Key]
	old.Config = ""
	st.Pods = map[string]*PodState{p.Key: &old}
	chs, st2, _ := Compute(st, snap(true, valid("a.yaml", p, t0)), t0.Add(time.Minute), testOpts)
	if len(chs) != 0 {
		t.Fatalf("state without config: [%s]", reasons(chs))
	}
	if got := st2.Pods[p.Key].Config; got != p.Config {
		t.Fatalf("config not adopted: %q, want %q", got, p.Config)
	}
	if st.Pods[p.Key].Config != "" {
		t.Fatal("the previous state was changed in place")
	}
}

func TestSameHashIsNoChange(t *testing.T) {
	p := pod("a", "img:1")
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	chs, _, recheck := Compute(st, snap(false, valid("a.yaml", p, t0.Add(time.Minute))), t0.Add(time.Minute), testOpts)
	if len(chs) != 0 || !recheck.IsZero() {
		t.Fatalf("same hash gave [%s], recheck %v", reasons(chs), recheck)
	}
}

// The kubelet's watch ignores a file it cannot read, so a manifest turned
// invalid keeps its pod running until the kubelet's next relist: the
// Warning says so at once (once settled), the REMOVE comes with a relist.
func TestTurnsInvalidThenRemovedAtRelist(t *testing.T) {
	other := valid("b.yaml", pod("b", "img:1"), t0)
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1"), t0), other))
	bad := types.File{Name: "a.yaml", Err: errors.New("line 7: spec.containers[0].image: Required value"), ChangedAt: t0.Add(10 * time.Second)}
	s := snap(false, bad, other)
	chs, st, recheck := Compute(st, s, t0.Add(10*time.Second), testOpts)
	if len(chs) != 0 || !recheck.Equal(t0.Add(11*time.Second)) {
		t.Fatalf("before settling: [%s] recheck %v", reasons(chs), recheck)
	}
	chs, st, recheck = Compute(st, s, recheck, testOpts)
	inv := mustOne(t, chs, types.ReasonInvalid)
	want := "a.yaml is invalid (line 7: image: Required value): the kubelet stops a-node-1 at its next relist, within 20s"
	detail := "a.yaml: line 7: spec.containers[0].image: Required value; the kubelet keeps running pod kube-system/a-node-1 from its last good parse and stops it at its next relist (within 20s) unless the file is fixed"
	if inv.Object.Kind != types.KindNode || inv.Message != want || inv.Detail != detail || inv.File != "a.yaml" {
		t.Fatalf("invalid = %+v\nwant message %q, detail %q", inv, want, detail)
	}
	// Not knowing when the kubelet relists, podwatch looks again when a
	// full relist period has passed: one of the kubelet's fell within.
	if !recheck.Equal(t0.Add(30*time.Second)) || len(st.Pods) != 2 {
		t.Fatalf("the pod must stay published for a relist period: recheck %v pods %v", recheck, st.Pods)
	}
	// A watch snapshot of the same state is no new occurrence.
	if chs, _, _ = Compute(st, s, t0.Add(12*time.Second), testOpts); len(chs) != 0 {
		t.Fatalf("repeat without relist: [%s]", reasons(chs))
	}

	// podwatch's own relist stands in for the kubelet's it did not see.
	rs := s
	rs.Relist, rs.Time = true, t0.Add(30*time.Second)
	chs, est, _ := Compute(st, rs, t0.Add(30*time.Second), testOpts)
	if reasons(chs) != types.ReasonInvalid+","+types.ReasonRemoved {
		t.Fatalf("at podwatch's relist: [%s]", reasons(chs))
	}
	rm := chs[1]
	if rm.Type != v1.EventTypeWarning || !strings.HasPrefix(rm.Message, "a.yaml is invalid (line 7: image: Required value): the kubelet stops the pod at its next relist") || !strings.Contains(rm.Message, "an estimate") || !strings.Contains(rm.Detail, "a.yaml is invalid: line 7") || len(est.Pods) != 1 {
		t.Fatalf("remove = %+v, pods %v", rm, est.Pods)
	}

	// A kubelet relist seen before the change took nothing in; one after
	// it stops the pod, and the message says no estimate.
	ks := s
	ks.KubeletRelist = t0.Add(5 * time.Second)
	if chs, _, _ = Compute(st, ks, t0.Add(13*time.Second), testOpts); len(chs) != 0 {
		t.Fatalf("a kubelet relist from before the change: [%s]", reasons(chs))
	}
	ks.KubeletRelist = t0.Add(15 * time.Second)
	chs, seen, _ := Compute(st, ks, t0.Add(15*time.Second), testOpts)
	if reasons(chs) != types.ReasonInvalid+","+types.ReasonRemoved {
		t.Fatalf("at the kubelet's relist: [%s]", reasons(chs))
	}
	if rm = chs[1]; !strings.HasSuffix(rm.Message, ": the kubelet stops the pod at its relist") || len(seen.Pods) != 1 {
		t.Fatalf("remove at the kubelet's relist = %q, pods %v", rm.Message, seen.Pods)
	}
}

// A relist that finds no valid file sends the kubelet's pod config an
// empty list but keeps its store: every pod stops, and the next valid
// change brings them all back, from their last good parse.
func TestEmptyRelistKeepsTheStore(t *testing.T) {
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1"), t0)))
	bad := types.File{Name: "a.yaml", Err: errors.New("line 3: yaml: unexpected end"), ChangedAt: t0.Add(10 * time.Second)}
	// The REMOVE happens at the kubelet's relist: at the one podwatch saw,
	// or, not seeing it, at its own, which it then says is an estimate.
	seen := snap(true, bad)
	seen.Time, seen.KubeletRelist = t0.Add(20*time.Second), t0.Add(19*time.Second)
	chs, _, _ := Compute(st, seen, t0.Add(20*time.Second), testOpts)
	if rm := removeMessage(chs); !strings.Contains(rm, "the kubelet stops the pod at its relist, and starts it again from its last good parse") || strings.Contains(rm, "estimate") {
		t.Fatalf("empty relist the kubelet's, seen: %q", rm)
	}
	rs := snap(true, bad)
	rs.Time = t0.Add(20 * time.Second)
	chs, st, _ = Compute(st, rs, t0.Add(20*time.Second), testOpts)
	if reasons(chs) != types.ReasonInvalid+","+types.ReasonRemoved {
		t.Fatalf("empty relist: [%s]", reasons(chs))
	}
	if rm := chs[1]; !strings.Contains(rm.Detail, "a.yaml is invalid: line 3: yaml: unexpected end, and the kubelet's relist found no other valid manifest") ||
		!strings.HasPrefix(rm.Message, "a.yaml is invalid (line 3: yaml: unexpected end), and no other manifest is valid: ") || len(st.Pods) != 0 {
		t.Fatalf("empty relist: %q, pods %v", chs[1].Message, st.Pods)
	}
	if rm := chs[1].Message; !strings.Contains(rm, "the kubelet stops the pod at its next relist (within 20s), and starts it again from its last good parse") || !strings.HasSuffix(rm, "its time is an estimate") {
		t.Fatalf("empty relist podwatch's own: %q", rm)
	}
	checkClaim(t, chs[1], claimWant{op: types.OpRemove, at: types.ClaimAtRelist, estimate: true})
	// A new valid file: the kubelet's store, a.yaml's last good pod in it,
	// is sent again with it.
	ws := snap(false, bad, valid("b.yaml", pod("b", "img:1"), t0.Add(25*time.Second)))
	chs, st, _ = Compute(st, ws, t0.Add(25*time.Second), testOpts)
	if reasons(chs) != types.ReasonAdded+","+types.ReasonAdded || len(st.Pods) != 2 {
		t.Fatalf("after a valid change: [%s], pods %v", reasons(chs), st.Pods)
	}
	if !strings.HasPrefix(chs[0].Message, "a.yaml, its last good parse: the kubelet starts the pod again") || !strings.Contains(chs[0].Detail, "added again from its last good parse of a.yaml") {
		t.Fatalf("the revived pod: %q", chs[0].Message)
	}
	// The next relist drops a.yaml's pod for good.
	rs = snap(true, bad, valid("b.yaml", pod("b", "img:1"), t0.Add(25*time.Second)))
	rs.Time = t0.Add(40 * time.Second)
	chs, st, _ = Compute(st, rs, t0.Add(40*time.Second), testOpts)
	if reasons(chs) != types.ReasonInvalid+","+types.ReasonRemoved || !strings.Contains(chs[1].Message, "a.yaml is invalid") || len(st.Pods) != 1 {
		t.Fatalf("the relist after: [%s], pods %v", reasons(chs), st.Pods)
	}
}

func TestTransientInvalidIsNeverReported(t *testing.T) {
	p := pod("a", "img:1")
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	half := types.File{Name: "a.yaml", Err: errors.New("line 3: yaml: unexpected end"), ChangedAt: t0.Add(10 * time.Second)}
	chs, st, _ := Compute(st, snap(false, half), t0.Add(10*time.Second), testOpts)
	if len(chs) != 0 {
		t.Fatalf("half-written file reported: [%s]", reasons(chs))
	}
	chs, st, recheck := Compute(st, snap(false, valid("a.yaml", p, t0.Add(10*time.Second+100*time.Millisecond))), t0.Add(10*time.Second+100*time.Millisecond), testOpts)
	if len(chs) != 0 || !recheck.IsZero() || len(st.Pending) != 0 {
		t.Fatalf("after the rewrite: [%s] recheck %v pending %v", reasons(chs), recheck, st.Pending)
	}
}

func TestRemovedFileIsNormalAfterSettle(t *testing.T) {
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1"), t0)))
	chs, st, recheck := Compute(st, snap(false), t0.Add(time.Minute), testOpts)
	if len(chs) != 0 || recheck.IsZero() {
		t.Fatalf("removal reported before settling: [%s]", reasons(chs))
	}
	chs, _, _ = Compute(st, snap(false), recheck, testOpts)
	if c := mustOne(t, chs, types.ReasonRemoved); c.Type != v1.EventTypeNormal || !strings.Contains(c.Message, "a.yaml was removed") {
		t.Fatalf("remove = %+v", c)
	}
}

func TestDuplicateBakWins(t *testing.T) {
	p := pod("kube-apiserver", "kube-apiserver:v1.37.2")
	st := publishedState(t, snap(true, valid("kube-apiserver.yaml", p, t0)))
	old := pod("kube-apiserver", "kube-apiserver:v1.37.1")
	s := snap(false, valid("kube-apiserver.yaml", p, t0), valid("kube-apiserver.yaml.bak", old, t0.Add(time.Minute)))
	chs, st, recheck := Compute(st, s, t0.Add(time.Minute), testOpts)
	// The content changed and the .bak is complete: the UPDATE is immediate;
	// the duplicate is bad news and waits.
	c := mustOne(t, chs, types.ReasonUpdated)
	if !strings.HasPrefix(c.Message, "now from kube-apiserver.yaml.bak (was kube-apiserver.yaml), image v1.37.2 → v1.37.1: ") || !strings.Contains(c.Detail, "v1.37.2 -> kube-apiserver:v1.37.1") {
		t.Fatalf("update = %q", c.Message)
	}
	chs, _, _ = Compute(st, s, recheck, testOpts)
	d := mustOne(t, chs, types.ReasonDuplicate)
	if d.Object.Kind != types.KindPod || !strings.HasPrefix(d.Message, "kube-apiserver.yaml.bak shadows kube-apiserver.yaml: the kubelet runs the pod from it;") || !strings.Contains(d.Detail, "runs the one from kube-apiserver.yaml.bak") {
		t.Fatalf("duplicate = %+v", d)
	}
	// The kubelet acts on a shadowed file's watch events: it does not
	// ignore it.
	if strings.Contains(d.Message, "ignores") || !strings.Contains(d.Message, "an edit of another restarts it until the next relist") ||
		!strings.Contains(d.Detail, "a write, chmod or delete of one still acts on the kubelet's watch") {
		t.Fatalf("duplicate = %+v", d)
	}
}

func TestWinnerChangeWithSameContentWaits(t *testing.T) {
	p := pod("a", "img:1")
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	// vim's backup-by-rename: a.yaml moved to a.yaml~ for a moment.
	s := snap(false, valid("a.yaml~", p, t0.Add(time.Minute)))
	chs, _, recheck := Compute(st, s, t0.Add(time.Minute), testOpts)
	if len(chs) != 0 || recheck.IsZero() {
		t.Fatalf("transient rename reported: [%s]", reasons(chs))
	}
	chs, _, _ = Compute(st, snap(false, valid("a.yaml", p, t0.Add(time.Minute+50*time.Millisecond))), t0.Add(time.Minute+50*time.Millisecond), testOpts)
	if len(chs) != 0 {
		t.Fatalf("after the editor finished: [%s]", reasons(chs))
	}
}

func TestSingleFileKeepsLastGoodPod(t *testing.T) {
	s := snap(true, valid("a.yaml", pod("a", "img:1"), t0))
	s.Single = true
	st := publishedState(t, s)
	s.Files = []*types.File{{Name: "a.yaml", Err: errors.New("yaml: line 2: mapping values are not allowed"), ChangedAt: t0.Add(time.Minute)}}
	chs, _, _ := Compute(st, s, t0.Add(2*time.Minute), testOpts)
	mustOne(t, chs, types.ReasonInvalid)
}

func TestUnreadableKeepsState(t *testing.T) {
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1"), t0)))
	f := types.File{Name: "a.yaml", ReadErr: fs.ErrPermission, ChangedAt: t0.Add(time.Minute)}
	chs, st2, _ := Compute(st, snap(true, f), t0.Add(2*time.Minute), testOpts)
	c := mustOne(t, chs, types.ReasonUnreadable)
	if c.Object.Kind != types.KindNode || len(st2.Pods) != 1 {
		t.Fatalf("unreadable: %+v pods %d", c, len(st2.Pods))
	}
	dir := snap(true)
	dir.PathErr = fmt.Errorf("open /m: %w", fs.ErrPermission)
	chs, st2, _ = Compute(st, dir, t0.Add(2*time.Minute), testOpts)
	if len(chs) != 0 || len(st2.Pods) != 1 {
		t.Fatalf("dir unreadable, first sight: [%s] pods %d", reasons(chs), len(st2.Pods))
	}
	chs, st2, _ = Compute(st2, dir, t0.Add(4*time.Minute), testOpts)
	if mustOne(t, chs, types.ReasonUnreadable); len(st2.Pods) != 1 {
		t.Fatal("pods dropped for podwatch's own read failure")
	}
}

func TestPathMissingRemovesAll(t *testing.T) {
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1"), t0), valid("b.yaml", pod("b", "img:1"), t0)))
	s := snap(true)
	s.PathErr = fmt.Errorf("stat /m: %w", fs.ErrNotExist)
	_, st, recheck := Compute(st, s, t0.Add(time.Minute), testOpts)
	chs, st, _ := Compute(st, s, recheck, testOpts)
	if reasons(chs) != types.ReasonPathMissing+","+types.ReasonRemoved+","+types.ReasonRemoved || len(st.Pods) != 0 {
		t.Fatalf("changes [%s], pods left %d", reasons(chs), len(st.Pods))
	}
	if chs[1].Type != v1.EventTypeWarning || !strings.Contains(chs[1].Message, "does not exist") {
		t.Fatalf("remove = %+v", chs[1])
	}
}

func TestWatchDegradedOnce(t *testing.T) {
	s := snap(true)
	s.Watch = types.WatchStatus{Err: errors.New("too many open files")}
	_, st, recheck := Compute(State{}, s, t0, testOpts)
	chs, st, _ := Compute(st, s, recheck, testOpts)
	if c := mustOne(t, chs, types.ReasonWatchDegraded); !strings.Contains(c.Message, "every 20s") {
		t.Fatalf("message %q", c.Message)
	}
	if chs, _, _ = Compute(st, s, recheck.Add(20*time.Second), testOpts); len(chs) != 0 {
		t.Fatalf("degraded watch reported again at relist: [%s]", reasons(chs))
	}
}

func TestIgnoredContentReported(t *testing.T) {
	p := pod("a", "img:1")
	p.Ignored = []types.Ignored{{Line: 9, What: `unknown field "spec.containers[0].imagePullPolicyy"`}}
	_, st, recheck := Compute(State{}, snap(true, valid("a.yaml", p, t0)), t0, testOpts)
	chs, _, _ := Compute(st, snap(true, valid("a.yaml", p, t0)), recheck, testOpts)
	c := mustOne(t, chs, types.ReasonIgnored)
	if c.Message != `a.yaml: the kubelet silently ignores line 9: unknown field "spec.containers[0].imagePullPolicyy"` {
		t.Fatalf("message %q", c.Message)
	}
}

func TestSecretsNeverInUpdate(t *testing.T) {
	with := func(token, env, note string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Annotations = map[string]string{"note": note}
			p.Spec.Containers[0].Command = []string{"server", "--token=" + token}
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "PASSWORD", Value: env}}
		}
	}
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1", with("old-t0ken", "old-pa55", "old-n0te")), t0)))
	chs, _, _ := Compute(st, snap(false, valid("a.yaml", pod("a", "img:1", with("new-t0ken", "new-pa55", "new-n0te")), t0)), t0, testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	for _, secret := range []string{"t0ken", "pa55", "n0te"} {
		if strings.Contains(c.Message, secret) {
			t.Fatalf("message leaks %q: %s", secret, c.Message)
		}
	}
	for _, secret := range []string{"t0ken", "pa55", "n0te"} {
		if strings.Contains(c.Detail, secret) {
			t.Fatalf("detail leaks %q: %s", secret, c.Detail)
		}
	}
	for _, field := range []string{"metadata.annotations[note]: changed", "spec.containers[a].command[1]: changed", "spec.containers[a].env[PASSWORD].value: changed"} {
		if !strings.Contains(c.Detail, field) {
			t.Fatalf("detail lacks %q: %s", field, c.Detail)
		}
	}
}

func TestManyChangesAreCapped(t *testing.T) {
	labels := func(v string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Labels = map[string]string{}
			for i := range 25 {
				p.Labels[fmt.Sprintf("l%02d", i)] = v
			}
		}
	}
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1", labels("x")), t0)))
	chs, _, _ := Compute(st, snap(false, valid("a.yaml", pod("a", "img:1", labels("y")), t0)), t0, testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if strings.Count(c.Detail, "-> y") != 20 || !strings.Contains(c.Detail, "and 5 more") {
		t.Fatalf("detail not capped at 20: %s", c.Detail)
	}
	if want := "a.yaml: metadata.labels[l00] x → y and 24 more fields: "; !strings.HasPrefix(c.Message, want) {
		t.Fatalf("message %q, want it to start with %q", c.Message, want)
	}
}

func TestStateSurvivesJSON(t *testing.T) {
	s := snap(true, valid("a.yaml", pod("a", "img:1"), t0))
	st := publishedState(t, s)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	chs, _, _ := Compute(back, s, t0.Add(time.Hour), testOpts)
	if len(chs) != 0 {
		t.Fatalf("reloaded state announced again: [%s]", reasons(chs))
	}
}

// A published pod without its JSON (its salt was lost) cannot be compared
// field by field: the UPDATE says so and names no field, rather than
// naming every hidden one as changed.
func TestUpdateWithoutSavedCopySaysSo(t *testing.T) {
	p := pod("a", "img:1")
	st := publishedState(t, snap(true, valid("a.yaml", p, t0)))
	old := *st.Pods[p.Key]
	old.JSON = nil
	st.Pods = map[string]*PodState{p.Key: &old}
	chs, _, _ := Compute(st, snap(false, valid("a.yaml", pod("a", "img:2"), t0.Add(time.Minute))), t0.Add(time.Minute), testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if !strings.HasPrefix(c.Message, "a.yaml: content changed: ") || !strings.Contains(c.Detail, "no saved copy of the previous version") || strings.Contains(c.Detail, "->") {
		t.Fatalf("message %q", c.Message)
	}
}

// ADD and UPDATE carry the pod and when its content was first seen, so a
// follower can look for it at the runtime and time the kubelet.
func TestPodChangesCarryThePodAndWhen(t *testing.T) {
	seen := t0.Add(-3 * time.Second)
	v1pod, v2pod := pod("etcd", "etcd:3.6"), pod("etcd", "etcd:3.7")
	chs, st, _ := Compute(State{}, snap(true, valid("etcd.yaml", v1pod, seen)), t0, testOpts)
	add := mustOne(t, chs, types.ReasonAdded)
	if add.Pod != v1pod || !add.At.Equal(seen) {
		t.Fatalf("ADD carries pod %p at %v, want %p at %v", add.Pod, add.At, v1pod, seen)
	}
	edited := t0.Add(time.Minute)
	chs, _, _ = Compute(st, snap(false, valid("etcd.yaml", v2pod, edited)), edited, testOpts)
	upd := mustOne(t, chs, types.ReasonUpdated)
	if upd.Pod != v2pod || !upd.At.Equal(edited) {
		t.Fatalf("UPDATE carries pod %p at %v, want %p at %v", upd.Pod, upd.At, v2pod, edited)
	}
	_, st, recheck := Compute(st, snap(false), edited, testOpts)
	chs, _, _ = Compute(st, snap(false), recheck, testOpts)
	if rm := mustOne(t, chs, types.ReasonRemoved); rm.Pod != nil {
		t.Fatalf("REMOVE carries a pod: %+v", rm.Pod)
	}
}

// A new metadata.uid alone is a restart; the message names the field and
// both values (a uid is not secret), where it once said "metadata changed".
func TestUpdateNamesUIDChange(t *testing.T) {
	uid := func(u string) func(*v1.Pod) { return func(p *v1.Pod) { p.UID = ktypes.UID(u) } }
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1", uid("a")), t0)))
	chs, st, _ := Compute(st, snap(false, valid("a.yaml", pod("a", "img:1", uid("b")), t0)), t0, testOpts)
	c := mustOne(t, chs, types.ReasonUpdated)
	if want := "a.yaml: metadata.uid a → b: "; !strings.HasPrefix(c.Message, want) {
		t.Fatalf("message %q does not start with %q", c.Message, want)
	}
	chs, _, _ = Compute(st, snap(false, valid("a.yaml", pod("a", "img:1"), t0)), t0, testOpts)
	c = mustOne(t, chs, types.ReasonUpdated)
	if want := `a.yaml: metadata.uid b → "": `; !strings.HasPrefix(c.Message, want) || !strings.Contains(c.Message, "restarts the pod (new UID)") {
		t.Fatalf("message %q does not start with %q and say restart", c.Message, want)
	}
}

// A list without a merge key names the index that changed; one item
// inserted is named once, not as a change of every later index. Secret
// lists give the index only, others the value too.
func TestUpdateNamesListIndex(t *testing.T) {
	with := func(cmd []string, caps ...v1.Capability) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Containers[0].Command = cmd
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Capabilities: &v1.Capabilities{Add: caps}}
		}
	}
	cases := []struct {
		name      string
		old, cur  func(*v1.Pod)
		want, not string
	}{
		{"changed", with([]string{"srv", "--a", "--t0ken=x"}), with([]string{"srv", "--a", "--t0ken=y"}),
			"command[2] changed: the kubelet", "t0ken"},
		{"inserted", with([]string{"srv", "--s3cret"}), with([]string{"srv", "--v=2", "--s3cret"}),
			"command[1] added: the kubelet", "s3cret"},
		{"dropped", with([]string{"srv", "--v=2", "--s3cret"}), with([]string{"srv", "--s3cret"}),
			"command[1] removed: the kubelet", "v=2"},
		{"not secret", with(nil, "NET_ADMIN"), with(nil, "NET_ADMIN", "SYS_TIME"),
			"securityContext.capabilities.add[1] added (SYS_TIME): the kubelet", ""},
		{"not secret changed", with(nil, "NET_ADMIN"), with(nil, "SYS_TIME"),
			"securityContext.capabilities.add[0] NET_ADMIN → SYS_TIME: the kubelet", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1", tc.old), t0)))
			chs, _, _ := Compute(st, snap(false, valid("a.yaml", pod("a", "img:1", tc.cur), t0)), t0, testOpts)
			c := mustOne(t, chs, types.ReasonUpdated)
			if !strings.HasPrefix(c.Message, "a.yaml: "+tc.want) || (tc.not != "" && strings.Contains(c.Message+c.Detail, tc.not)) {
				t.Fatalf("message %q, want it to start with %q and lack %q", c.Message, "a.yaml: "+tc.want, tc.not)
			}
		})
	}
}

// A missing folder's watch is tried again every second, by the kubelet as by
// podwatch: the message must not send the reader to the relist.
func TestWatchDegradedMissingPathSaysTheRetry(t *testing.T) {
	s := snap(true)
	s.PathErr = fmt.Errorf("stat /m: %w", fs.ErrNotExist)
	s.Watch = types.WatchStatus{Err: fmt.Errorf("stat /m: %w", fs.ErrNotExist)}
	_, st, recheck := Compute(State{}, s, t0, testOpts)
	chs, _, _ := Compute(st, s, recheck, testOpts)
	if reasons(chs) != types.ReasonWatchDegraded+","+types.ReasonPathMissing {
		t.Fatalf("changes [%s], want WatchDegraded,ManifestPathMissing", reasons(chs))
	}
	c := chs[0]
	if strings.Contains(c.Message, "relist") || !strings.Contains(c.Message, "does not exist") || !strings.Contains(c.Message, "every 1s") {
		t.Fatalf("message %q; want the 1s retry of a missing path, not the relist", c.Message)
	}
}
