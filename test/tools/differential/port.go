package differential

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/podwatch/podwatch/pkg/manifest"
	"github.com/podwatch/podwatch/pkg/model"
)

// portSide runs podwatch's port of the kubelet (pkg/model) on the folder:
// it lists it once, as the kubelet's file source does at start, then
// hands every inotify event to the port in the order the kernel gave them,
// reading each file when the port asks, as the kubelet does.
type portSide struct {
	b    *board
	dir  string
	node string
	src  *model.FileSource
	st   *model.Storage
	w    *fsnotify.Watcher

	// Guarded by b.
	batches []batch
	markers setOfName
	errs    []string
}

// startPort watches dir, lists it and returns; serve then runs the watch.
func startPort(dir, node string) (*portSide, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, err
	}
	p := &portSide{b: newBoard(), dir: dir, node: node, src: model.NewFileSource(), st: model.NewStorage(), w: w, markers: setOfName{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		w.Close()
		return nil, err
	}
	var entries []model.Entry
	for _, e := range ents {
		kind := model.EntryRegular
		if e.IsDir() {
			kind = model.EntryDir
		}
		entries = append(entries, model.Entry{Path: dir + "/" + e.Name(), Kind: kind})
	}
	u, err := p.src.ListConfig(true, entries, p.read)
	p.merge(u, err)
	return p, nil
}

// serve feeds the port every event until ctx ends, then closes the watch.
func (p *portSide) serve(ctx context.Context) {
	defer p.w.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-p.w.Errors:
			p.b.update(func() { p.errs = append(p.errs, err.Error()) })
		case ev := <-p.w.Events:
			e, ok := model.ProduceWatchEvent(ev.Name, fsOp(ev.Op))
			if !ok {
				continue
			}
			u, err := p.src.ConsumeWatchEvent(e, p.read)
			p.merge(u, err)
		}
	}
}

func fsOp(op fsnotify.Op) model.FsOp {
	var out model.FsOp
	for from, to := range map[fsnotify.Op]model.FsOp{
		fsnotify.Create: model.Create, fsnotify.Write: model.Write, fsnotify.Remove: model.Remove,
		fsnotify.Rename: model.Rename, fsnotify.Chmod: model.Chmod,
	} {
		if op.Has(from) {
			out |= to
		}
	}
	return out
}

// read is extractFromFile's read and decode, by pkg/manifest.
func (p *portSide) read(path string) (model.Pod, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return model.Pod{}, err
	}
	pod, err := manifest.Decode(data, manifest.Options{NodeName: p.node})
	if err != nil {
		return model.Pod{}, err
	}
	return model.FromManifest(pod, path), nil
}

// merge records what the merge sends for u, as the kubelet side records
// its PodUpdates.
func (p *portSide) merge(u *model.Update, err error) {
	var sent []model.PodUpdate
	if u != nil {
		sent = p.st.Merge(u)
	}
	p.b.update(func() {
		if err != nil {
			p.errs = append(p.errs, err.Error())
		}
		for _, pu := range sent {
			var bt batch
			for _, pod := range pu.Pods {
				ns, name, _ := strings.Cut(pod.Key, "/")
				if ns == markerNamespace {
					if pu.Op == model.KubeletAdd {
						m := strings.TrimSuffix(name, "-"+strings.ToLower(p.node))
						bt.markers = append(bt.markers, m)
						p.markers[m] = true
					}
					continue
				}
				bt.ops = append(bt.ops, Op{Pod: pod.Key, Op: string(pu.Op), UID: pod.UID})
			}
			if len(bt.ops)+len(bt.markers) > 0 {
				p.batches = append(p.batches, bt)
			}
		}
	})
}

// state describes what the port side saw, for a timeout's message; call
// it under the board's lock.
func (p *portSide) state() string {
	return fmt.Sprintf("%d batches, markers %v, errors %q", len(p.batches), sortedNames(p.markers), p.errs)
}
