package differential

import (
	"context"
	"fmt"
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

// kubeletSide runs config.NewPodConfig fed by config.NewSourceFile, as the
// kubelet does for --pod-manifest-path, and keeps every update it sends.
type kubeletSide struct {
	b    *board
	node string

	// Guarded by b.
	updates int       // PodUpdates received, empty ones included
	batches []batch   // non-empty ones, in order
	markers setOfName // marker pods added so far
	reads   map[string]int
	errs    []string
}

// batch is what one side produced in one go: a PodUpdate of the kubelet, a
// diff.Compute of podwatch. A batch is never split between phases, because
// the pods in one PodUpdate come in map order.
type batch struct {
	ops     []Op
	markers []string
}

type setOfName map[string]bool

func startKubelet(ctx context.Context, dir, node string, period time.Duration) *kubeletSide {
	k := &kubeletSide{b: newBoard(), node: node, markers: setOfName{}, reads: map[string]int{}}
	logger := logr.New(&kubeletLog{k: k})
	ctx = klog.NewContext(ctx, logger) // PodConfig's merge logs through ctx
	// A nil Events channel drops the events the pod config records (for two
	// files defining one pod) rather than blocking on a full buffer.
	cfg := config.NewPodConfig(&record.FakeRecorder{}, nil)
	ch := cfg.Channel(ctx, kubetypes.FileSource)
	go k.collect(ctx, cfg.Updates())
	config.NewSourceFile(logger, dir, types.NodeName(node), period, ch)
	return k
}

func (k *kubeletSide) collect(ctx context.Context, updates <-chan kubetypes.PodUpdate) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-updates:
			k.b.update(func() { k.record(u) })
		}
	}
}

func (k *kubeletSide) record(u kubetypes.PodUpdate) {
	k.updates++
	var bt batch
	for _, p := range u.Pods {
		if p.Namespace == markerNamespace {
			if u.Op == kubetypes.ADD {
				name := strings.TrimSuffix(p.Name, "-"+strings.ToLower(k.node))
				bt.markers = append(bt.markers, name)
				k.markers[name] = true
			}
			continue
		}
		bt.ops = append(bt.ops, Op{Pod: p.Namespace + "/" + p.Name, Op: kubeletOp(u.Op), UID: string(p.UID), Image: images(p)})
	}
	if len(bt.ops)+len(bt.markers) > 0 {
		k.batches = append(k.batches, bt)
	}
}

func kubeletOp(op kubetypes.PodOperation) string {
	switch op {
	case kubetypes.ADD:
		return "ADD"
	case kubetypes.DELETE:
		return "DELETE"
	case kubetypes.REMOVE:
		return "REMOVE"
	case kubetypes.UPDATE:
		return "UPDATE"
	case kubetypes.RECONCILE:
		return "RECONCILE"
	}
	return fmt.Sprintf("op-%d", op)
}

func images(p *v1.Pod) string {
	var out []string
	for _, c := range p.Spec.Containers {
		out = append(out, c.Image)
	}
	return strings.Join(out, ",")
}

// state describes what the kubelet side saw, for a timeout's message; call
// it under the board's lock.
func (k *kubeletSide) state() string {
	return fmt.Sprintf("%d updates, markers %v, errors %q", k.updates, sortedNames(k.markers), k.errs)
}

// kubeletLog is the file source's logger. Its errors are kept for the
// report, and its "Reading config file" lines (V(3)) are counted per path:
// the watch reads a file when it changes, a relist reads every file, so a
// new read of a file that never changes means a relist happened.
type kubeletLog struct {
	k      *kubeletSide
	values []any
}

// readingFile is the file source's V(3) message before it reads a manifest.
const readingFile = "Reading config file"

func (l *kubeletLog) Init(logr.RuntimeInfo) {}

// Enabled stops at 3: V(4) and up format whole pods on every merge.
func (l *kubeletLog) Enabled(level int) bool { return level <= 3 }

func (l *kubeletLog) Info(_ int, msg string, kv ...any) {
	if msg != readingFile {
		return
	}
	path, ok := lookup(kv, "path")
	if !ok {
		return
	}
	l.k.b.update(func() { l.k.reads[path]++ })
}

func (l *kubeletLog) Error(err error, msg string, kv ...any) {
	all := append(append([]any{}, l.values...), kv...)
	l.k.b.update(func() { l.k.errs = append(l.k.errs, fmt.Sprintf("%s: %v %v", msg, err, all)) })
}

func (l *kubeletLog) WithValues(kv ...any) logr.LogSink {
	return &kubeletLog{k: l.k, values: append(append([]any{}, l.values...), kv...)}
}

func (l *kubeletLog) WithName(string) logr.LogSink { return l }

func lookup(kv []any, key string) (string, bool) {
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok && k == key {
			return fmt.Sprint(kv[i+1]), true
		}
	}
	return "", false
}
