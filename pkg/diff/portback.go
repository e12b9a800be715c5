package diff

import (
	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/types"
)

// A relist podwatch did not see may take back the pod the kubelet ran
// until one watch event gave the pod another file (a chmod of a shadowed
// file, then the winner again). The change is dated by podwatch's own
// relist, long after the kubelet's may have been; its window
// (types.TakeBack) lets a follower tell the pod taken back. The window is
// the port's own: the watch event's input is dated (model.Input.At), and
// the merge dates each pod it first sees (model.Pod.Seen).

// takeBack is the window of key's change to to, when the window's relist
// made it by taking back the pod the kubelet ran until one watch event of
// the window gave the pod another file: Since is that event, Ran when
// the merge first took in the pod taken back (zero when podwatch does not
// know). Zero for any other change: the pod before the relist not given
// by a watch event, or given in place of another pod than the one taken
// back (two such events).
func (w *portWindow) takeBack(key, to string) types.TakeBack {
	i := w.madeBy(key, to)
	if i < 0 || w.inputs[i].Relist == nil {
		return types.TakeBack{}
	}
	was := w.before(i).Running(key)
	j := i - 1
	for ; j >= 0; j-- {
		if w.states[j].Running(key) == was && w.before(j).Running(key) != was {
			break
		}
	}
	if was == "" || j < 0 || w.inputs[j].Event == nil || w.inputs[j].At.IsZero() || w.before(j).Running(key) != to {
		return types.TakeBack{}
	}
	p, _ := w.before(j).Pod(key)
	return types.TakeBack{Since: w.inputs[j].At, Ran: p.Seen}
}

// before is the own view's state before the window's i-th input.
func (w *portWindow) before(i int) *model.Kubelet {
	w.replayed()
	if i == 0 {
		return w.from
	}
	return w.states[i-1]
}

// awaitsTakeBack says a watch event after the window's last relist gave a
// pod another file, in the own view, while the file it ran from is still
// the one the kubelet's next relist runs it from: that relist takes the
// pod back, and the window, held until then, keeps the event and the pod
// before it (takeBack). The base keeps neither: the merge forgets a pod
// it no longer runs. Only for a file the kubelet's mapping held before
// the window (a chmod or a write of a shadowed file): a new one (an
// editor's auto-save) may go again at the save, and its reads, held,
// would be widened late where a fold leaves them as podwatch read them.
func (w *portWindow) awaitsTakeBack() bool {
	last := -1
	for i, in := range w.inputs {
		if in.Relist != nil {
			last = i
		}
	}
	// A cheap look first: only an event that reads a pod of a key another
	// file gave can give the pod another file.
	gave := map[string]string{}
	maybe := false
	for _, in := range w.inputs[last+1:] {
		p := readPod(in)
		if p == nil {
			continue
		}
		if _, known := w.ps.base.Source.KeyOf(p.File); !known {
			continue
		}
		if s, ok := w.ps.base.Source.Stored(p.Key); ok && s.File != p.File {
			maybe = true
		}
		if g, ok := gave[p.Key]; ok && g != p.File {
			maybe = true
		}
		gave[p.Key] = p.File
	}
	if !maybe {
		return false
	}
	end := w.before(len(w.inputs))
	for j := last + 1; j < len(w.inputs); j++ {
		p := readPod(w.inputs[j])
		if p == nil {
			continue
		}
		if _, known := w.ps.base.Source.KeyOf(p.File); !known {
			continue
		}
		was, ok := w.before(j).Source.Stored(p.Key)
		now, held := end.Source.Stored(p.Key)
		if !ok || !held || was.File == p.File || now.File != p.File {
			continue
		}
		if f := relistWinner(w.c.snap.Files, p.Key); f != nil && model.PathOf(w.c.snap, f.Name) == was.File {
			return true
		}
	}
	return false
}

// readPod is the pod the own view reads at a watch event that adds or
// modifies a file, nil for none.
func readPod(in model.Input) *model.Pod {
	if in.Event == nil || in.Event.Type == model.PodDelete || len(in.Reads) == 0 {
		return nil
	}
	return in.Reads[0].Pod
}

// replayed replays the window's inputs in the own view, once per step:
// states and from are nil until a claim asks for them.
func (w *portWindow) replayed() {
	if w.states == nil {
		w.from, w.states = model.ReplayEachTouched(w.ps.base, w.e, w.inputs)
	}
}
