package lint

import (
	"fmt"
	"path/filepath"
)

// checkDuplicates finds files of one directory that define the same pod.
// The kubelet's relist replaces its store with the files in byte-wise order,
// so the last one wins and the others are shadowed at every relist. Its
// watch still acts on a shadowed file: writing or chmod-ing
// kube-apiserver.yaml while kube-apiserver.yaml.bak wins runs the edit until
// the next relist brings the .bak back, and deleting it stops the pod until
// then. files must be in that order.
func (c *checker) checkDuplicates(files []File) {
	winner := map[string]int{}
	for i, f := range files {
		if f.Verdict == Valid {
			winner[f.Pod] = i
		}
	}
	for i := range files {
		f := &files[i]
		if f.Verdict != Valid || winner[f.Pod] == i {
			continue
		}
		w := &files[winner[f.Pod]]
		f.Verdict, f.ShadowedBy = Shadowed, w.Path
		// The kubelet's relist keeps the winner, but its watch acts on the
		// file an event names: editing or deleting the shadowed file
		// swaps (or stops) the pod until the next relist swaps it back.
		msg := fmt.Sprintf("pod %q is also defined by %s, which wins at every relist (the kubelet keeps the file that sorts last); "+
			"but writing, chmod-ing or deleting this file makes the kubelet act on it at once, running or stopping this file's version "+
			"until its next relist brings the winner back: two restarts",
			f.Pod, filepath.Base(w.Path))
		if f.hash == w.hash {
			msg += "; both define the same pod today"
		}
		c.add(f.Path, 0, Error, CodeDuplicatePod, msg)
	}
}
