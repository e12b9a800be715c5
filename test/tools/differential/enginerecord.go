package differential

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	ptypes "github.com/podwatch/podwatch/pkg/types"
)

// A Recording is one round of the engine fuzz kept whole: podwatch's
// snapshots, the kubelet's relists and what the kubelet did, so that the
// engines can be replayed over it again, with no kubelet and no clock,
// and come to the same claims. The rounds an engine did not cover are
// kept in testdata/engine as timelines to fix it by.

// Recording is a round of the engine fuzz, replayable (Replay).
type Recording struct {
	Seed   uint64        `json:"seed"`
	Ops    []string      `json:"ops"`
	Dir    string        `json:"dir"`
	Period time.Duration `json:"period"`
	Settle time.Duration `json:"settle"`
	// Files holds every file of the snapshots once; a snapshot names its
	// files by index, so that a file shared between snapshots is shared
	// again when replayed, as the source shares it.
	Files   []recFile           `json:"files"`
	Snaps   []recSnap           `json:"snaps"`
	Relists []RelistSpan        `json:"relists"`
	Kubelet map[string][]string `json:"kubelet"`
	Runs    map[string][]string `json:"runs"`
	Start   map[string]bool     `json:"start"`
	// Verdicts are each engine's, by "engine/relists", when recorded.
	Verdicts map[string]bool `json:"verdicts"`
	// Why says, by hand, what the round shows.
	Why string `json:"why,omitempty"`
}

// RelistSpan is one relist of the kubelet's: when it began (its folder
// open, as near as its log tells) and when it ended.
type RelistSpan struct {
	Begin time.Time `json:"begin"`
	End   time.Time `json:"end"`
}

type recFile struct {
	Name       string      `json:"name"`
	Path       string      `json:"path"`
	Pod        *ptypes.Pod `json:"pod,omitempty"`
	Err        string      `json:"err,omitempty"`
	ReadErr    string      `json:"readErr,omitempty"`
	NotRegular bool        `json:"notRegular,omitempty"`
	Mode       fs.FileMode `json:"mode,omitempty"`
	ChangedAt  time.Time   `json:"changedAt"`
	Complete   bool        `json:"complete,omitempty"`
}

type recSnap struct {
	Time    time.Time           `json:"time"`
	Relist  bool                `json:"relist,omitempty"`
	Extra   bool                `json:"extra,omitempty"`
	Seq     uint64              `json:"seq"`
	Changed []string            `json:"changed"`
	Events  []ptypes.WatchEvent `json:"events"`
	Single  bool                `json:"single,omitempty"`
	Path    string              `json:"path"`
	PathErr string              `json:"pathErr,omitempty"`
	Files   []int               `json:"files"`
	WatchUp bool                `json:"watchUp"`
	Listed  int                 `json:"listed,omitempty"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func textErr(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// record keeps snaps in r, each file once.
func (r *Recording) record(snaps []ptypes.Snapshot) {
	index := map[*ptypes.File]int{}
	for _, s := range snaps {
		rs := recSnap{Time: s.Time, Relist: s.Relist, Extra: s.Extra, Seq: s.Seq, Changed: s.Changed, Events: s.Events, Single: s.Single,
			Path: s.Path, PathErr: errText(s.PathErr), WatchUp: s.Watch.Up, Listed: s.Listed, Files: []int{}}
		for _, f := range s.Files {
			i, ok := index[f]
			if !ok {
				i = len(r.Files)
				index[f] = i
				r.Files = append(r.Files, recFile{Name: f.Name, Path: f.Path, Pod: f.Pod, Err: errText(f.Err), ReadErr: errText(f.ReadErr),
					NotRegular: f.NotRegular, Mode: f.Mode, ChangedAt: f.ChangedAt, Complete: f.Complete})
			}
			rs.Files = append(rs.Files, i)
		}
		r.Snaps = append(r.Snaps, rs)
	}
}

// snapshots are the recorded snapshots again. An error is only its text
// now, which is all the engines read of the kubelet's verdict on a file.
func (r *Recording) snapshots() []ptypes.Snapshot {
	files := make([]*ptypes.File, len(r.Files))
	for i, f := range r.Files {
		files[i] = &ptypes.File{Name: f.Name, Path: f.Path, Pod: f.Pod, Err: textErr(f.Err), ReadErr: textErr(f.ReadErr),
			NotRegular: f.NotRegular, Mode: f.Mode, ChangedAt: f.ChangedAt, Complete: f.Complete}
	}
	var out []ptypes.Snapshot
	for _, rs := range r.Snaps {
		s := ptypes.Snapshot{Time: rs.Time, Relist: rs.Relist, Extra: rs.Extra, Seq: rs.Seq, Changed: rs.Changed, Events: rs.Events, Single: rs.Single,
			Path: rs.Path, PathErr: textErr(rs.PathErr), Watch: ptypes.WatchStatus{Up: rs.WatchUp}, Listed: rs.Listed}
		for _, i := range rs.Files {
			s.Files = append(s.Files, files[i])
		}
		out = append(out, s)
	}
	return out
}

// Replay steps every engine over the recording again and judges it.
func (r *Recording) Replay() []EngineResult {
	return engineVerdicts(r.snapshots(), r.Relists, r.Dir, r.Period, r.Settle, r.Kubelet, r.Runs, r.Start)
}

// ReadRecording reads a recording written by WriteFile.
func ReadRecording(path string) (*Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Recording
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// WriteFile writes r to path, indented.
func (r *Recording) WriteFile(path string) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
