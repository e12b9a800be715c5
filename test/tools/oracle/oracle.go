package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// Verdict is what the kubelet makes of one manifest file.
type Verdict struct {
	Valid bool
	// Key is "<namespace>/<name>" of the pod the kubelet runs, for a valid file.
	Key string
	// Message is the kubelet's reason for an invalid file. Paths inside it are
	// reduced to the file's base name so the text does not depend on where
	// the file was staged.
	Message string
	// Pod is the pod as the kubelet's pod config hands it on, for a valid file.
	Pod *v1.Pod
	// Path is where FileSource staged the file: the source its UID hashes.
	Path string
}

// Options configures a run of the kubelet's file source.
type Options struct {
	NodeName string
	// Timeout bounds the wait for the source's first update; zero means 30s.
	// A 10 MiB file on a busy 2-core machine needs a few seconds.
	Timeout time.Duration
}

// FileSource stages data as a file called name in a fresh directory of its
// own and runs the kubelet's file source over it.
//
// Each case gets its own directory because the kubelet drops every pod but
// one when two files yield the same pod name, and the corpus is full of
// pods called static-web.
//
// The source's goroutines and inotify watch cannot be stopped (the kubelet
// never needs to), so every call leaks them; that is acceptable for tests
// but not for a loop over thousands of inputs, which should use Decode.
func FileSource(ctx context.Context, name string, data []byte, opts Options) (Verdict, error) {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		// The source silently skips dot files, which would read as "invalid".
		return Verdict{}, fmt.Errorf("oracle: %q must be a plain file name not starting with a dot", name)
	}
	dir, err := os.MkdirTemp("", "podwatch-oracle-")
	if err != nil {
		return Verdict{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return Verdict{}, err
	}
	res, err := Dir(ctx, dir, opts)
	if err != nil {
		return Verdict{}, err
	}
	switch {
	case len(res.Pods) == 1 && len(res.Rejected) == 0:
		p := res.Pods[0]
		return Verdict{Valid: true, Key: p.Namespace + "/" + p.Name, Pod: p, Path: path}, nil
	case len(res.Pods) == 0 && res.Rejected[path] != nil:
		return Verdict{Message: strings.ReplaceAll(res.Rejected[path].Error(), path, name)}, nil
	default:
		return Verdict{}, fmt.Errorf("oracle: %s: %d pods and %d rejections for one file; source errors: %v",
			name, len(res.Pods), len(res.Rejected), res.SourceErrors)
	}
}

// DirResult is the outcome of the file source's first listing of a directory.
type DirResult struct {
	Pods []*v1.Pod
	// Rejected maps a file's path to the error the kubelet logged for it.
	Rejected map[string]error
	// SourceErrors are other errors the source logged so far, for diagnosis.
	SourceErrors []string
}

// Dir runs the kubelet's file source over dir and returns what its first
// listing produced. The pod config sends exactly one update for a source's
// first listing, even when no pod was accepted (to mark the source as seen),
// so that update is a complete answer and no sleeping is needed.
func Dir(ctx context.Context, dir string, opts Options) (DirResult, error) {
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	sink := newCaptureSink()
	logger := logr.New(sink)
	ctx = klog.NewContext(ctx, logger)

	// Every pod is unique within its own source, so the recorder never
	// receives a duplicate-name event; the buffer is there in case it does.
	cfg := config.NewPodConfig(record.NewFakeRecorder(64), nil)
	ch := cfg.Channel(ctx, kubetypes.FileSource)
	// The period only schedules relists; an hour keeps them out of the way.
	config.NewSourceFile(logger, dir, types.NodeName(opts.NodeName), time.Hour, ch)

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case u := <-cfg.Updates():
		if u.Op != kubetypes.ADD {
			return DirResult{}, fmt.Errorf("oracle: first update for %s is op %v, want ADD", dir, u.Op)
		}
		// The source logs a rejection before it sends the listing that
		// omits the file, and the update travels through channels from
		// there, so the log is complete by now.
		return DirResult{Pods: u.Pods, Rejected: sink.rejections(), SourceErrors: sink.others()}, nil
	case <-timer.C:
		return DirResult{}, fmt.Errorf("oracle: no update from the file source for %s within %v; source errors: %v",
			dir, timeout, sink.others())
	case <-ctx.Done():
		return DirResult{}, errors.Join(ctx.Err(), fmt.Errorf("source errors: %v", sink.others()))
	}
}
