package diff

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A kubelet whose relist came late had its file source held up by a busy
// sync loop: it takes a save's watch events in seconds apart, and a
// relist between two of them is a restart more than any count of
// podwatch's own events. An UPDATE on the watch says so while that is
// recent, and not once it is three periods old (a minute at least); a
// REMOVE at the relist never does.
func TestBehindKubeletMayRestartMore(t *testing.T) {
	const clause = "restart the pod more times on the way"
	for _, tc := range []struct {
		name   string
		period time.Duration
		heldUp time.Duration // before the edit; 0: never seen
		lost   time.Duration // the phase lost before the edit; 0: not lost
		uneven time.Duration // reads less than a period apart, no phase known; 0: none
		want   bool
	}{
		{"never held up", 20 * time.Second, 0, 0, 0, false},
		{"held up a period ago", 20 * time.Second, 20 * time.Second, 0, 0, true},
		{"held up four periods ago", 20 * time.Second, 80 * time.Second, 0, 0, false},
		{"a 2s period, held up 30s ago: a minute at least", 2 * time.Second, 30 * time.Second, 0, 0, true},
		{"a 2s period, held up 70s ago", 2 * time.Second, 70 * time.Second, 0, 0, false},
		{"a 2s period, its phase lost 2s ago", 2 * time.Second, 0, 2 * time.Second, 0, true},
		{"a 2s period, its phase lost 70s ago", 2 * time.Second, 0, 70 * time.Second, 0, false},
		{"held up long ago, lost lately", 2 * time.Second, 70 * time.Second, 2 * time.Second, 0, true},
		{"a 2s period, uneven reads 6s ago", 2 * time.Second, 0, 0, 6 * time.Second, true},
		{"a 20s period, uneven reads 50s ago", 20 * time.Second, 0, 0, 50 * time.Second, true},
		{"a 2s period, uneven reads 70s ago", 2 * time.Second, 0, 0, 70 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := publishedState(t, snap(true, valid("web.yaml", pod("web", "img:1"), t0)))
			edit := t0.Add(2 * time.Minute)
			s := snap(false, valid("web.yaml", pod("web", "img:2"), edit))
			s.Time = edit
			if tc.heldUp > 0 {
				s.KubeletHeldUp = edit.Add(-tc.heldUp)
			}
			if tc.lost > 0 {
				s.KubeletRelistLost = edit.Add(-tc.lost)
			}
			if tc.uneven > 0 {
				s.KubeletUneven = edit.Add(-tc.uneven)
			}
			opts := testOpts
			opts.RelistPeriod = tc.period
			chs, _, _ := Compute(st, s, edit, opts)
			up := mustOne(t, chs, types.ReasonUpdated)
			if got := strings.Contains(up.Detail, clause); got != tc.want {
				t.Errorf("UPDATE says the kubelet may restart more: %v, want %v: %q", got, tc.want, up.Detail)
			}
		})
	}
	// An invalid file's REMOVE comes at the relist: the file source's lag
	// adds no restart to it.
	st := publishedState(t, snap(true, valid("web.yaml", pod("web", "img:1"), t0)))
	bad := snap(true, types.File{Name: "web.yaml", Err: errors.New("line 3: yaml: unexpected end"), ChangedAt: t0.Add(time.Minute)})
	bad.Time, bad.KubeletRelist, bad.KubeletHeldUp = t0.Add(2*time.Minute), t0.Add(2*time.Minute), t0.Add(2*time.Minute-time.Second)
	chs, _, _ := Compute(st, bad, bad.Time, testOpts)
	if rm := removeMessage(chs); rm == "" || strings.Contains(rm, clause) {
		t.Errorf("REMOVE at the relist: %q, want one without the clause", rm)
	}
}
