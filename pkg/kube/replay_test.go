package kube

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/types"
)

// apiRun is one run of the agent's recorder with the API sink alone on cs,
// warm-started from what the API holds about the pod, as the agent does.
func apiRun(t *testing.T, cs *fake.Clientset, changes ...events.Occurrence) *events.Recorder {
	t.Helper()
	sink, err := NewSink(typed{cs.CoreV1()}, SinkOptions{Node: node}, clocktesting.NewFakeClock(t0), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	restore := Restore(ctx, typed{cs.CoreV1()}, node, nil, nil, events.PodRef("kube-system", "etcd-"+node))
	rec, err := events.New(events.Options{Host: node}, clocktesting.NewFakeClock(t0), nil,
		[]events.Registration{events.DeliverTo("api", sink)}, restore)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range changes {
		if err := rec.Record(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return rec
}

// apiCounts lists the pod's StaticPodUpdated Events in the API by message.
func apiCounts(t *testing.T, cs *fake.Clientset) map[string]v1.Event {
	t.Helper()
	l, err := cs.CoreV1().Events("kube-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]v1.Event{}
	for _, ev := range l.Items {
		if _, dup := out[ev.Message]; dup {
			t.Fatalf("two Events in the API for %q", ev.Message)
		}
		out[ev.Message] = ev
	}
	return out
}

func TestAPIExactAcrossAReplay(t *testing.T) {
	cs := fake.NewClientset(mirrorPod("hash1"))
	change := func(msg, id string) events.Occurrence {
		return events.Occurrence{Object: events.PodRef("kube-system", "etcd-"+node), Type: v1.EventTypeNormal,
			Reason: types.ReasonUpdated, Message: msg, Change: id}
	}
	ab, ba := change("image: a -> b", "id-b"), change("image: b -> a", "id-a")

	apiRun(t, cs, ab) // counted, then the crash before the state was saved
	before := apiCounts(t, cs)[ab.Message]
	if before.Count != 1 || before.Annotations[events.AnnotationChange] != "1/id-b" {
		t.Fatalf("API after the first run: count %d, mark %q", before.Count, before.Annotations[events.AnnotationChange])
	}

	// The restart, warm-started from the API alone, recomputes a -> b.
	rec := apiRun(t, cs, ab)
	after := apiCounts(t, cs)
	if len(after) != 1 || after[ab.Message].Count != 1 || after[ab.Message].Name != before.Name {
		t.Fatalf("API after the replay: %d Events, %s x%d; want %s x1 alone", len(after), after[ab.Message].Name, after[ab.Message].Count, before.Name)
	}
	if got := rec.Stats().Replayed; got != 1 {
		t.Fatalf("replayed %d, want 1", got)
	}

	// The same edit again for real, in the next run: b -> a, a -> b.
	apiRun(t, cs, ba, ab)
	final := apiCounts(t, cs)
	if final[ab.Message].Count != 2 || final[ba.Message].Count != 1 {
		t.Fatalf("after b -> a -> b: a->b x%d, b->a x%d; want 2 and 1", final[ab.Message].Count, final[ba.Message].Count)
	}
	// The patch carried the mark of the newest change: a fourth run that
	// recomputes a -> b recognises it.
	if got := final[ab.Message].Annotations[events.AnnotationChange]; got != "3/id-b" {
		t.Fatalf("mark on the patched Event %q, want 3/id-b", got)
	}
	apiRun(t, cs, ab)
	if got := apiCounts(t, cs)[ab.Message].Count; got != 2 {
		t.Fatalf("a second replay counted: x%d, want 2", got)
	}
}
