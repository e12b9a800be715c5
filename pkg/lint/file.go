package lint

import (
	"errors"
	"io/fs"

	"github.com/podwatch/podwatch/pkg/manifestfs"

	"github.com/podwatch/podwatch/pkg/types"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// Verdict is what the kubelet does with one file.
type Verdict string

const (
	Valid      Verdict = "valid"      // the kubelet runs its pod
	Shadowed   Verdict = "shadowed"   // valid, but a file that sorts later defines the same pod and wins
	Invalid    Verdict = "invalid"    // the kubelet rejects it
	Unchecked  Verdict = "unchecked"  // podwatch refused to decode it (manifest.ErrTooComplex)
	Skipped    Verdict = "skipped"    // not a regular file: the kubelet does not read it
	Unreadable Verdict = "unreadable" // podwatch could not read it; the kubelet, as root, may
)

// File is the verdict on one directory entry or file path.
type File struct {
	Path       string  `json:"file"`
	Verdict    Verdict `json:"verdict"`
	Pod        string  `json:"pod,omitempty"`        // "<namespace>/<name>" after defaulting, when valid or shadowed
	ShadowedBy string  `json:"shadowedBy,omitempty"` // the file whose pod the kubelet runs instead
	hash       string
}

// checkFile reads and decodes a path already stat'ed as a regular file.
func (c *checker) checkFile(path string, fi fs.FileInfo) {
	c.checkPermissions(path, fi, false)
	f := File{Path: path}
	pod, err := c.decode(path, fi)
	var merr *manifest.Error
	switch {
	case err == nil:
		f.Verdict, f.Pod, f.hash = Valid, pod.Key, pod.Hash
		for _, ig := range pod.Ignored {
			c.add(path, ig.Line, Warning, CodeIgnoredContent, "silently ignored: "+ig.What)
		}
	case errors.Is(err, manifest.ErrTooComplex):
		f.Verdict = Unchecked
		c.add(path, lineOf(err), Error, CodeTooComplex, messageOf(err)+"; podwatch refuses to expand it, so it cannot tell what the kubelet would make of it")
	case errors.As(err, &merr):
		f.Verdict = Invalid
		c.add(path, merr.Line, Error, CodeInvalidManifest, merr.Msg)
	default:
		f.Verdict = Unreadable
		c.add(path, 0, Error, CodeIOError, "cannot read: "+ioMessage(err))
	}
	c.report.Files = append(c.report.Files, f)
}

func (c *checker) decode(path string, fi fs.FileInfo) (*types.Pod, error) {
	// The size alone decides, as for the kubelet: no need to read 10 MiB.
	if fi.Size() >= manifest.MaxSize {
		return nil, tooLarge()
	}
	data, err := manifestfs.ReadManifest(path)
	if err != nil {
		return nil, err
	}
	return manifest.Decode(data, manifest.Options{NodeName: c.opts.NodeName})
}

// tooLarge matches manifest.Decode's own error for the same verdict.
func tooLarge() error {
	return &manifest.Error{Msg: manifest.ErrTooLarge.Error(), Err: manifest.ErrTooLarge}
}

func lineOf(err error) int {
	var merr *manifest.Error
	if errors.As(err, &merr) {
		return merr.Line
	}
	return 0
}

func messageOf(err error) string {
	var merr *manifest.Error
	if errors.As(err, &merr) {
		return merr.Msg
	}
	return err.Error()
}

// ioMessage drops the path from a *fs.PathError: the finding names the file.
func ioMessage(err error) string {
	var perr *fs.PathError
	if errors.As(err, &perr) {
		return perr.Op + ": " + perr.Err.Error()
	}
	return err.Error()
}
