package diff

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// A window whose events came after the kubelet's relist was taken in is
// held for the next relist only from when that one is due on the known
// phase, less what the kubelet's watch may still queue: an event long
// before it is folded at once. With a sign that the file source runs
// behind, or with no phase, the next relist may come any time, and the
// event is held.
func TestPortHoldsForTheNextRelistFromWhenItIsDue(t *testing.T) {
	cases := []struct {
		name  string
		signs func(*types.Snapshot)
		held  bool
	}{
		{"no next relist known", nil, true},
		{"next relist due in 10 s", func(s *types.Snapshot) {
			s.KubeletRelistNext = s.KubeletRelist.Add(20 * time.Second)
		}, false},
		{"next relist due in 10 s, file source held up", func(s *types.Snapshot) {
			s.KubeletRelistNext = s.KubeletRelist.Add(20 * time.Second)
			s.KubeletHeldUp = s.KubeletRelist
		}, true},
		{"next relist due in 300 ms", func(s *types.Snapshot) {
			s.KubeletRelistNext = s.Time.Add(300 * time.Millisecond)
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newPortRun(20 * time.Second)
			r.signs = tc.signs
			web1 := valid("web.yaml", pod("web", "img:1"), t0)
			web2 := valid("web.yaml", pod("web", "img:2"), t0.Add(30*time.Second))
			r.step(0, 0, nil, &web1)
			r.step(21*time.Second, 20*time.Second, []types.WatchEvent{}, &web1)
			if ops := podOps(r.step(30*time.Second, 20*time.Second, []types.WatchEvent{{Name: "web.yaml"}}, &web2)); ops != "UPDATE web.yaml" {
				t.Fatalf("said %q, want UPDATE web.yaml", ops)
			}
			if held := len(r.st.port.tl.Inputs()) > 0; held != tc.held {
				t.Errorf("window held: %v, want %v", held, tc.held)
			}
		})
	}
}
