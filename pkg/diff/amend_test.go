package diff

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A change said on the watch with a count of its restarts, before any
// sign that the kubelet's file source runs behind, is amended once when
// a sign dated within a minute of it (three periods at least) comes: one
// Warning for the pod that names how many of its last changes it covers.
// A change that said the file source runs behind, one said at a relist,
// and one said long before or after the sign are not.
func TestAmendChangesSaidBeforeASign(t *testing.T) {
	const amended = "may have taken in the events of"
	edit := t0.Add(2 * time.Minute)
	type step struct {
		at     time.Duration // after edit
		image  string        // the pod's image written then; "" for none
		heldUp time.Duration // the last relist seen late, after edit; 0: none
		want   string        // the Warning's words, "" for none
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a late relist a second after the UPDATE", []step{
			{0, "img:2", 0, ""},
			{time.Second, "", time.Second, "the last change podwatch said of this pod (since 2026-11-30T09:02:00Z)"},
			{2 * time.Second, "", time.Second, ""}, // the same sign: once
		}},
		{"two UPDATEs, then a late relist", []step{
			{0, "img:2", 0, ""},
			{5 * time.Second, "img:3", 0, ""},
			{10 * time.Second, "", 9 * time.Second, "the last 2 changes podwatch said of this pod (since 2026-11-30T09:02:00Z)"},
		}},
		{"a late relist read before the UPDATE, seen after it", []step{
			{0, "img:2", 0, ""},
			{time.Second, "", -time.Second, "the last change"},
		}},
		{"a late relist read two minutes before the UPDATE, seen after it", []step{
			{0, "img:2", 0, ""},
			{time.Second, "", -2 * time.Minute, ""},
		}},
		{"a late relist two minutes after the UPDATE", []step{
			{0, "img:2", 0, ""},
			{2 * time.Minute, "", 2 * time.Minute, ""},
		}},
		{"an UPDATE said while the file source runs behind", []step{
			{0, "", -time.Second, ""},
			{time.Second, "img:2", -time.Second, ""},
			{2 * time.Second, "", 2 * time.Second, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := publishedState(t, snap(true, valid("web.yaml", pod("web", "img:1"), t0)))
			cur := valid("web.yaml", pod("web", "img:1"), t0)
			var seq uint64 = 1
			var said []uint64 // the claims of the pod's changes said so far
			for i, s := range tc.steps {
				at := edit.Add(s.at)
				if s.image != "" {
					cur = valid("web.yaml", pod("web", s.image), at)
				}
				sn := snap(false, cur)
				seq++
				sn.Time, sn.Seq = at, seq
				if s.heldUp != 0 {
					sn.KubeletHeldUp = edit.Add(s.heldUp)
				}
				chs, _ := Advance(&st, sn, at, testOpts)
				var got []string
				for _, ch := range chs {
					if ch.Op != "" {
						said = append(said, ch.Claim.ID)
						// Said after a sign, it bounds nothing on its way.
						if max := ch.Claim.Before.Max; (max == nil) != (s.heldUp != 0 && s.heldUp <= 0) {
							t.Errorf("step %d: %s claims before max %v with a sign at %v", i, ch.Op, max, s.heldUp)
						}
					}
					if ch.Reason == types.ReasonMayHaveRestarted {
						if ch.Claim == nil || !slices.Equal(ch.Claim.Amends, said) || ch.Claim.Before.Max != nil {
							t.Errorf("step %d: the amendment claims %+v, want it to amend %v, unbounded", i, ch.Claim, said)
						}
						// The message says the fact; the detail, since when.
						got = append(got, ch.Detail)
						if !strings.HasPrefix(ch.Message, "the kubelet may have restarted the pod more times than the last ") || strings.Contains(ch.Message, ";") {
							t.Errorf("step %d: message %q, want the fact alone", i, ch.Message)
						}
						if ch.Type != "Warning" || ch.Op != "" || ch.Object != podObject("kube-system/web-node-1") {
							t.Errorf("step %d: %+v, want a pod Warning with no op", i, ch)
						}
					}
				}
				switch {
				case s.want == "" && len(got) > 0:
					t.Errorf("step %d: amended %q, want nothing", i, got)
				case s.want != "" && (len(got) != 1 || !strings.Contains(got[0], amended) || !strings.Contains(got[0], s.want)):
					t.Errorf("step %d: amended %q, want one Warning saying %q", i, got, s.want)
				}
			}
		})
	}
}

// A change said at a relist begins no run: the relist's own changes are
// what it read, whatever the file source's lag.
func TestAmendLeavesRelistChanges(t *testing.T) {
	st := publishedState(t, snap(true, valid("web.yaml", pod("web", "img:1"), t0)))
	at := t0.Add(2 * time.Minute)
	s := snap(true, valid("web.yaml", pod("web", "img:2"), at))
	s.Time, s.KubeletRelist = at, at
	chs, _ := Advance(&st, s, at, testOpts)
	mustOne(t, chs, types.ReasonUpdated)
	late := snap(false, valid("web.yaml", pod("web", "img:2"), at))
	late.Time, late.KubeletRelist, late.KubeletHeldUp = at.Add(time.Second), at, at.Add(time.Second)
	chs, _ = Advance(&st, late, late.Time, testOpts)
	if r := reasons(chs); r != "" {
		t.Errorf("after a late relist: %s, want nothing", r)
	}
}
