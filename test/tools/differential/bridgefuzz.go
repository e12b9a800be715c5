package differential

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/model"
	"github.com/podwatch/podwatch/pkg/source/file"
	ptypes "github.com/podwatch/podwatch/pkg/types"
)

// A fuzz round also runs podwatch's own file source on the folder and
// turns its snapshots into the port's inputs by model.Timeline, as podwatch
// is to: the kubelet's outcome, pod by pod, must be one of those ends too.
// Where podwatch learns the kubelet's relists from its relist detector,
// the round tells the timeline from the kubelet's log: each relist is
// set, as Snapshot.KubeletRelist, on the first snapshot after it began.

// BridgeResult is the second verdict of a round: the port replayed over
// podwatch's snapshots.
type BridgeResult struct {
	Snapshots int  `json:"snapshots"`
	Inputs    int  `json:"inputs"`
	Ends      int  `json:"ends"`
	Capped    bool `json:"capped"`
	Covered   bool `json:"covered"`
	// Blind names the versions (images) the kubelet ran that podwatch
	// never read: a read of podwatch's came too late for them, or its
	// source folded their events into one. The bridge can only guess at
	// them (model.Unseen), so a round that has any and is not covered is
	// not held against it.
	Blind []string `json:"blind,omitempty"`
	// Debug is the snapshots and the inputs, for a round not covered
	// with no blind version.
	Debug []string `json:"debug,omitempty"`

	last ptypes.Snapshot
}

// fuzzPodwatch keeps the snapshots of podwatch's file source.
type fuzzPodwatch struct {
	b     *board
	snaps []ptypes.Snapshot
}

// startFuzzPodwatch starts podwatch's file source on dir, listing it in
// full every relist, and waits for its first snapshot; settle is its
// settle delay (zero: the default).
func startFuzzPodwatch(ctx context.Context, dir string, relist, settle time.Duration) (*fuzzPodwatch, error) {
	src, err := file.New(file.Options{Path: dir, NodeName: node, FileCheckFrequency: relist, SettleDelay: settle}, nil, nil)
	if err != nil {
		return nil, err
	}
	p := &fuzzPodwatch{b: newBoard()}
	snaps := make(chan ptypes.Snapshot)
	go func() { _ = src.Run(ctx, snaps) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-snaps:
				p.b.update(func() { p.snaps = append(p.snaps, s) })
			}
		}
	}()
	return p, p.b.await(ctx, waitLimit, "podwatch's first snapshot", func() bool { return len(p.snaps) > 0 }, func() string { return "" })
}

// bridge replays snaps, up to the one that shows the cut, with the
// kubelet's relists begun at relists, and judges the kubelet's runs.
func bridge(snaps []ptypes.Snapshot, relists []time.Time, cut string, kubelet map[string][]string) *BridgeResult {
	res := &BridgeResult{}
	var tl model.Timeline
	images := map[string]string{} // Semantic -> image
	for _, s := range snaps {
		if slices.ContainsFunc(s.Files, func(f *ptypes.File) bool { return f.Name == filepath.Base(cut) }) {
			// The relists since the last change: each over the
			// folder as podwatch last saw it.
			last := res.last
			for _, at := range relists {
				if at.Before(s.Time) {
					last.KubeletRelist, last.Events, last.Relist, last.Extra = at, []ptypes.WatchEvent{}, false, false
					tl.Add(last)
					res.Snapshots++
				}
			}
			break
		}
		for len(relists) > 0 && !relists[0].After(s.Time) {
			s.KubeletRelist = relists[0]
			relists = relists[1:]
			if len(relists) > 0 && !relists[0].After(s.Time) {
				// Another relist before this snapshot: the one before
				// falls among this snapshot's events, with nothing
				// else to tell them apart.
				tl.Add(s)
				res.Snapshots++
				s.Events, s.Relist, s.Extra = []ptypes.WatchEvent{}, false, false
			}
		}
		for _, f := range s.Files {
			if f.Pod != nil && len(f.Pod.Containers) > 0 {
				images[model.FromManifest(f.Pod, f.Path).Semantic] = strings.TrimPrefix(f.Pod.Containers[0], "c=")
			}
		}
		tl.Add(s)
		res.Snapshots++
		res.last = s
		res.Debug = append(res.Debug, snapDebug(s))
	}
	for _, r := range kubelet {
		for _, img := range r {
			if img != "" && !slices.Contains(slices.Collect(maps.Values(images)), img) && !slices.Contains(res.Blind, img) {
				res.Blind = append(res.Blind, img)
			}
		}
	}
	inputs := tl.Inputs()
	res.Inputs = len(inputs)
	ex := model.Explore(model.NewKubelet(), inputs, bridgeCap)
	res.Capped = ex.Capped
	res.Covered, res.Ends = covers(ex, kubelet, func(semantic string) string {
		if strings.HasPrefix(semantic, model.Unseen) {
			return anyImage
		}
		return images[semantic]
	})
	if res.Covered || len(res.Blind) > 0 {
		res.Debug = nil
	} else {
		for _, in := range inputs {
			res.Debug = append(res.Debug, inputDebug(in, images))
		}
	}
	return res
}

// covers says whether, in every part of ex, some end runs what the
// kubelet ran of the part's keys, and every key it ran is in a part; and
// how many ends there are. image names a pod's content as the kubelet's
// runs do.
func covers(ex *model.Explored, kubelet map[string][]string, image func(semantic string) string) (bool, int) {
	ok, ends, inParts := true, 0, 0
	for _, part := range ex.Parts {
		ends += len(part.Ends)
		want := map[string][]string{}
		for _, key := range part.Keys {
			if r, found := kubelet[key]; found {
				want[key] = r
				inParts++
			}
		}
		if !slices.ContainsFunc(part.Ends, func(end model.End) bool { return sameRuns(want, portRuns(end, image)) }) {
			ok = false
		}
	}
	return ok && inParts == len(kubelet), ends
}

// bridgeCap bounds the distinct states, and the relists' orders, the
// port explores over podwatch's snapshots: their reads have more choices
// than the second watch's, and each relist that may come early multiplies
// the orders, each explored whole.
const bridgeCap = 1 << 9

// anyImage stands, in the port's runs, for a pod of content podwatch never
// read: it matches whatever the kubelet ran.
const anyImage = "*"

func snapDebug(s ptypes.Snapshot) string {
	var b strings.Builder
	b.WriteString("snap " + s.Time.Format("05.000000"))
	if s.Relist {
		b.WriteString(" relist")
	}
	if !s.KubeletRelist.IsZero() {
		b.WriteString(" kubelet-relist@" + s.KubeletRelist.Format("05.000000"))
	}
	for _, e := range s.Events {
		b.WriteString(" " + e.Name)
		if e.Gone {
			b.WriteString("(gone)")
		}
	}
	b.WriteString(" |")
	for _, f := range s.Files {
		switch {
		case f.Pod != nil:
			b.WriteString(" " + f.Name + "=" + f.Pod.Containers[0])
		case f.NotRegular:
		default:
			b.WriteString(" " + f.Name + "=invalid")
		}
		if !f.Complete && !f.NotRegular {
			b.WriteString("(partial)")
		}
	}
	return b.String()
}

func inputDebug(in model.Input, images map[string]string) string {
	reads := func(os []model.Outcome) string {
		var r []string
		for _, o := range os {
			switch {
			case o.Pod != nil:
				img := images[o.Pod.Semantic]
				if strings.HasPrefix(o.Pod.Semantic, model.Unseen) {
					img = anyImage
				}
				r = append(r, img+"@"+filepath.Base(o.Pod.File))
			default:
				r = append(r, o.Err.Error())
			}
		}
		return strings.Join(r, "|")
	}
	if in.Event != nil {
		if in.Event.Type == model.PodDelete {
			return "delete " + filepath.Base(in.Event.Path)
		}
		return "read " + filepath.Base(in.Event.Path) + " " + reads(in.Reads)
	}
	var b strings.Builder
	b.WriteString("relist early " + strings.Repeat("<", in.Early))
	for _, f := range in.Relist.Files {
		if f.Kind == model.EntryRegular {
			b.WriteString(" " + filepath.Base(f.Path) + ":" + reads(f.Reads))
		}
	}
	return b.String()
}
