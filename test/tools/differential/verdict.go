package differential

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The words of a verdict: what happens to a pod's containers.
const (
	Appears  = "add"     // the pod starts
	Restarts = "restart" // the pod stops and starts again, under a new UID
	Updated  = "update"  // same UID (pinned by the manifest), new spec
	Goes     = "remove"  // the pod stops
	Deleted  = "delete"  // graceful deletion (the kubelet's DELETE)
)

// Verdicts maps "namespace/name" to the words for each phase, 0 to
// Result.Phases (the last holds anything that came after the final
// settle, and is normally empty).
type Verdicts map[string][][]string

// KubeletVerdicts reads the kubelet's updates. Its pod config keys pods by
// UID: a new UID under a known name comes as REMOVE of the old pod, then
// ADD of the new one, and that pair is the restart. An UPDATE keeps the
// UID. RECONCILE only carries status back, so it is no verdict.
func KubeletVerdicts(r *Result) Verdicts {
	return reduce(r.Kubelet, r.Phases, func(op Op) string {
		switch op.Op {
		case "ADD":
			return Appears
		case "REMOVE":
			return Goes
		case "UPDATE":
			return Updated
		case "DELETE":
			return Deleted
		case "RECONCILE":
			return ""
		}
		return "kubelet " + op.Op
	})
}

// PodwatchVerdicts reads podwatch's changes. Its UPDATE promises a new UID
// unless the manifest pins metadata.uid.
func PodwatchVerdicts(r *Result) Verdicts {
	return reduce(r.Podwatch, r.Phases, func(op Op) string {
		switch op.Op {
		case "ADD":
			return Appears
		case "REMOVE":
			return Goes
		case "UPDATE":
			if op.InPlace {
				return Updated
			}
			return Restarts
		}
		return "podwatch " + op.Op
	})
}

// reduce groups the ops' words by pod and phase, and reads a pod that goes
// and comes straight back within a phase as one restart, on either side:
// for the kubelet that is how a restart looks, and podwatch is held to the
// same reading.
func reduce(ops []Op, phases int, word func(Op) string) Verdicts {
	v := Verdicts{}
	for _, op := range ops {
		w := word(op)
		if w == "" {
			continue
		}
		if v[op.Pod] == nil {
			v[op.Pod] = make([][]string, phases+1)
		}
		ph := &v[op.Pod][min(op.Phase, phases)]
		if n := len(*ph); w == Appears && n > 0 && (*ph)[n-1] == Goes {
			(*ph)[n-1] = Restarts
			continue
		}
		*ph = append(*ph, w)
	}
	return v
}

// Equal reports whether the two agree on every pod in every phase.
func (v Verdicts) Equal(o Verdicts) bool {
	for _, pod := range podsOf(v, o) {
		a, b := v[pod], o[pod]
		for i := range max(len(a), len(b)) {
			if !slices.Equal(at(a, i), at(b, i)) {
				return false
			}
		}
	}
	return true
}

// Words returns every word used, for checks on the suite as a whole.
func (v Verdicts) Words() []string {
	var out []string
	for _, phases := range v {
		for _, ws := range phases {
			out = append(out, ws...)
		}
	}
	return out
}

func at(phases [][]string, i int) []string {
	if i < len(phases) {
		return phases[i]
	}
	return nil
}

func podsOf(vs ...Verdicts) []string {
	set := map[string]bool{}
	for _, v := range vs {
		for pod := range v {
			set[pod] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// FormatPair writes both sides' verdicts in the same columns: per pod, the
// phases separated by " | ", "-" for a phase where nothing happened. Phase
// 0 (the listing at start) and the phase after the last settle are left out
// when nothing happened there on either side. The node's suffix on pod
// names is dropped.
func FormatPair(a, b Verdicts, phases int, node string) (string, string) {
	first, last := 0, phases
	if emptyPhase(0, a, b) {
		first = 1
	}
	if emptyPhase(phases, a, b) {
		last = phases - 1
	}
	format := func(v Verdicts) string {
		var pods []string
		for _, pod := range podsOf(a, b) {
			if v[pod] == nil {
				continue
			}
			var cols []string
			for i := first; i <= last; i++ {
				ws := at(v[pod], i)
				if len(ws) == 0 {
					cols = append(cols, "-")
				} else {
					cols = append(cols, strings.Join(ws, ", "))
				}
			}
			pods = append(pods, fmt.Sprintf("%s: %s", strings.TrimSuffix(pod, "-"+node), strings.Join(cols, " | ")))
		}
		if len(pods) == 0 {
			return "(nothing)"
		}
		return strings.Join(pods, "; ")
	}
	return format(a), format(b)
}

func emptyPhase(i int, vs ...Verdicts) bool {
	for _, v := range vs {
		for _, phases := range v {
			if len(at(phases, i)) > 0 {
				return false
			}
		}
	}
	return true
}
