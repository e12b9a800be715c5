//go:build linux

package kubelet_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/types"
	"github.com/podwatch/podwatch/test/tools/kubelet"
)

// widths is how tight podwatch's claims of one run were: before.max -
// before.min of each change with a bound, and how many had none, by why.
// A claim without a bound is one podwatch said with its file source seen
// behind (behind), widened afterwards by a StaticPodMayHaveRestarted for
// the same sign (amended), past the exploration's cap (capped), or after
// a forced fold of podwatch's window dropped ways that held the pod
// otherwise (folded); the issue allows a wider claim only with a sign of
// a late file source.
type widths struct {
	bounded                         []int
	behind, amended, capped, folded int
	// unsigned counts the unbounded ones of runs whose kubelet log shows
	// no late file source (result.lateSource); summed over runs only.
	unsigned int
}

// claimWidths reads the widths of the claims about the pod fullName from
// evs, as podwatchSaid reads the claims themselves.
func claimWidths(evs []v1.Event, fullName string) widths {
	var w widths
	counts := map[string]int32{}
	var said []types.Claim
	for _, ev := range evs {
		o := ev.InvolvedObject
		if o.Kind != types.KindPod || o.Namespace+"/"+o.Name != fullName {
			continue
		}
		c, ok := eventClaim(ev)
		if !ok {
			continue
		}
		for range ev.Count - counts[ev.Name] {
			switch {
			case c.Op != "":
				said = append(said, c)
			case ev.Reason == types.ReasonMayHaveRestarted:
				for i := range said {
					if slices.Contains(c.Amends, said[i].ID) && said[i].Before.Max != nil {
						said[i].Before.Max = nil
						w.amended++
					}
				}
			}
		}
		counts[ev.Name] = max(counts[ev.Name], ev.Count)
	}
	for _, c := range said {
		switch {
		case c.Capped:
			w.capped++
		case c.Folded:
			w.folded++
		case c.Before.Max != nil:
			w.bounded = append(w.bounded, *c.Before.Max-c.Before.Min)
		default:
			w.behind++
		}
	}
	// An amended claim is counted as amended, not as said behind.
	w.behind -= w.amended
	return w
}

// widthSummary is, per scenario, the median and worst width of its
// bounded claims over all its runs, and its claims without a bound.
func widthSummary(results []result) string {
	var order []string
	all := map[string]*widths{}
	for _, r := range results {
		a, ok := all[r.family]
		if !ok {
			a = &widths{}
			all[r.family] = a
			order = append(order, r.family)
		}
		a.bounded = append(a.bounded, r.widths.bounded...)
		a.behind += r.widths.behind
		a.amended += r.widths.amended
		a.capped += r.widths.capped
		a.folded += r.widths.folded
		if !r.lateSource {
			a.unsigned += r.widths.behind + r.widths.amended + r.widths.capped + r.widths.folded
		}
	}
	slices.Sort(order)
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tbounded claims\tmedian width\tworst width\tunbounded: said behind\tamended\tcapped\tfolded\tof them in runs the kubelet's log shows no late source")
	for _, f := range order {
		a := all[f]
		med, worst := "-", "-"
		if n := len(a.bounded); n > 0 {
			slices.Sort(a.bounded)
			med, worst = fmt.Sprint(a.bounded[(n-1)/2]), fmt.Sprint(a.bounded[n-1])
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", f, len(a.bounded), med, worst, a.behind, a.amended, a.capped, a.folded, a.unsigned)
	}
	w.Flush()
	return b.String()
}

// lateSource reports whether the kubelet's file source ran late after
// begin: a read of one of names in dir that its pod config merged over a
// second later, the file source blocked on a busy sync loop. A failed
// watch read sends nothing to merge, so only the good ones count.
func lateSource(s kubelet.Snapshot, begin time.Time, dir string, names []string) bool {
	for _, rd := range s.Reads {
		if !rd.At.After(begin) || rd.Failed || filepath.Dir(rd.Path) != dir || !slices.Contains(names, filepath.Base(rd.Path)) {
			continue
		}
		if m, ok := s.MergeAfter(rd.At); ok && m.Sub(rd.At) > time.Second {
			return true
		}
	}
	return false
}

// untight says why podwatch's claims were too loose to judge, or "": on
// the quiet kubelet, whose file source a few dozen pods seldom hold up,
// more than half of its claims bounded no restart. A podwatch that said
// every change with before {0, null} would agree with any kubelet; this
// is what fails it.
func untight(results []result) string {
	claims, unbounded := 0, 0
	for _, r := range results {
		if !r.quiet || r.failed {
			continue
		}
		w := r.widths
		n := w.behind + w.amended + w.capped + w.folded
		claims += len(w.bounded) + n
		unbounded += n
	}
	if 2*unbounded <= claims {
		return ""
	}
	return fmt.Sprintf("on the quiet kubelet %d of podwatch's %d claims bounded no restart on the way: a claim without a bound agrees with any kubelet, and a quiet file source gives few signs of running late", unbounded, claims)
}
