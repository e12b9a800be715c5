package diff

import (
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// cp writes web.yaml in place just after a relist of the kubelet's opened
// the folder, and before the relist opened the file: the relist read the
// new content and made the UPDATE podwatch said on the watch, whose event
// the kubelet took in after it, reading the same content again. That is
// one restart, said already; the relist, placed before the event, dates
// it, and is no restart more.
func TestPortRelistThatReadAWriteInPlaceIsNoRestartMore(t *testing.T) {
	r := newPortRun(2 * time.Second)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	v1 := valid("web.yaml", pod("web", "img:1"), t0)
	v2 := valid("web.yaml", pod("web", "img:2"), t0.Add(ms(11480)))
	r.step(0, 0, nil, &v1)
	r.step(ms(9600), ms(9500), []types.WatchEvent{}, &v1)
	if ops := podOps(r.step(ms(11480), ms(9500), []types.WatchEvent{{Name: "web.yaml", Folded: 1}}, &v2)); ops != "UPDATE web.yaml" {
		t.Fatalf("at cp's write: said %q, want UPDATE web.yaml", ops)
	}
	r.signs = func(s *types.Snapshot) {
		s.KubeletRelistRead = types.RelistRead{Listed: []string{"web.yaml"},
			Written: []types.RelistWrite{{Name: "web.yaml", Before: true, Since: t0.Add(ms(11470))}}}
	}
	for _, at := range []int{12200, 13000, 14000} {
		if chs := r.step(ms(at), ms(11490), []types.WatchEvent{}, &v2); len(chs) != 0 {
			for _, ch := range chs {
				t.Errorf("at +%dms: said %s %s %q, want nothing more", at, ch.Reason, ch.File, ch.Message)
			}
		}
	}
}
