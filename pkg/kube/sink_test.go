package kube

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podwatch/podwatch/pkg/events"
)

const node = "node-a"

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func podEvent(name string, count int32) *v1.Event {
	return &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		InvolvedObject: events.PodRef("kube-system", "etcd-"+node),
		Reason:         types.ReasonStarted, Message: "started", Type: v1.EventTypeNormal,
		Source:         v1.EventSource{Component: events.Component, Host: node},
		FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0.Add(time.Duration(count) * time.Second)),
		Count: count, ReportingController: events.Component, ReportingInstance: "podwatch-" + node,
	}
}

func mirrorPod(hash string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-" + node,
		Annotations: map[string]string{MirrorAnnotation: hash}}}
}

func newTestSink(t *testing.T, objs ...runtime.Object) (*Sink, *fake.Clientset, *testutil.LockedBuffer) {
	t.Helper()
	cs := fake.NewClientset(objs...)
	var lb testutil.LockedBuffer
	s, err := NewSink(typed{cs.CoreV1()}, SinkOptions{Node: node}, clocktesting.NewFakeClock(t0), slog.New(slog.NewTextHandler(&lb, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s, cs, &lb
}

func getEvent(t *testing.T, cs *fake.Clientset, ns, name string) *v1.Event {
	t.Helper()
	ev, err := cs.CoreV1().Events(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get event %s/%s: %v", ns, name, err)
	}
	return ev
}

func verbs(cs *fake.Clientset) string {
	var v []string
	for _, a := range cs.Actions() {
		v = append(v, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return strings.Join(v, ", ")
}

func TestCreateThenPatchWithMirrorUID(t *testing.T) {
	s, cs, _ := newTestSink(t, mirrorPod("hash1"))
	ctx := context.Background()
	if err := s.Write(ctx, podEvent("e.1", 1), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, podEvent("e.1", 7), true); err != nil {
		t.Fatal(err)
	}
	reqs := verbs(cs)
	got := getEvent(t, cs, "kube-system", "e.1")
	if got.Count != 7 || got.InvolvedObject.UID != "hash1" || !got.LastTimestamp.Time.Equal(t0.Add(7*time.Second)) {
		t.Errorf("event = count %d uid %q last %v; want 7, hash1, +7s", got.Count, got.InvolvedObject.UID, got.LastTimestamp)
	}
	if want := "get pods, create events, patch events"; reqs != want {
		t.Errorf("requests = %s; want %s", reqs, want)
	}
}

func TestPatchNotFoundCreatesWithFullCount(t *testing.T) {
	s, cs, _ := newTestSink(t, mirrorPod("hash1"))
	if err := s.Write(context.Background(), podEvent("e.2", 42), true); err != nil {
		t.Fatal(err)
	}
	if want := "patch events, get pods, create events"; verbs(cs) != want {
		t.Errorf("requests = %s; want %s", verbs(cs), want)
	}
	if got := getEvent(t, cs, "kube-system", "e.2"); got.Count != 42 {
		t.Errorf("count = %d, want 42", got.Count)
	}
}

func TestCreateConflictGetsThenPatches(t *testing.T) {
	existing := podEvent("e.3", 2)
	s, cs, _ := newTestSink(t, mirrorPod("hash1"), existing)
	if err := s.Write(context.Background(), podEvent("e.3", 5), false); err != nil {
		t.Fatal(err)
	}
	if want := "get pods, create events, get events, patch events"; verbs(cs) != want {
		t.Errorf("requests = %s; want %s", verbs(cs), want)
	}
	if got := getEvent(t, cs, "kube-system", "e.3"); got.Count != 5 {
		t.Errorf("count = %d, want 5", got.Count)
	}
}

func TestInvalidIsPermanent(t *testing.T) {
	s, cs, _ := newTestSink(t)
	cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, "e.4", nil)
	})
	err := s.Write(context.Background(), podEvent("e.4", 1), false)
	if !errors.Is(err, events.ErrPermanent) || !apierrors.IsInvalid(err) {
		t.Errorf("err = %v; want permanent and still an Invalid status error", err)
	}
}

func TestRetryableErrors(t *testing.T) {
	for name, apiErr := range map[string]error{
		"503":       apierrors.NewServiceUnavailable("down"),
		"429":       apierrors.NewTooManyRequests("slow down", 1),
		"500":       apierrors.NewInternalError(errors.New("boom")),
		"transport": errors.New("dial tcp 127.0.0.1:1: connect: connection refused"),
	} {
		t.Run(name, func(t *testing.T) {
			s, cs, _ := newTestSink(t)
			cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apiErr
			})
			err := s.Write(context.Background(), podEvent("e.5", 1), false)
			if err == nil || errors.Is(err, events.ErrPermanent) {
				t.Errorf("err = %v; want retryable", err)
			}
		})
	}
}

func TestForbiddenLoggedOnceAndRetryable(t *testing.T) {
	s, cs, lb := newTestSink(t)
	cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "e.6", errors.New("no RBAC"))
	})
	for range 3 {
		err := s.Write(context.Background(), podEvent("e.6", 1), false)
		if err == nil || errors.Is(err, events.ErrPermanent) || !apierrors.IsForbidden(err) {
			t.Fatalf("err = %v; want retryable Forbidden", err)
		}
		s.mu.Lock()
		s.failing = false // no jitter wait on the fake clock
		s.mu.Unlock()
	}
	if n := strings.Count(lb.String(), "refused podwatch's credentials"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, lb.String())
	}
}

// A kube-apiserver just restarted answers 403 until its RBAC authorizer
// has read the roles: one refusal holds writes back for a second, not for
// the full park, or every node's counts would wait minutes after a short
// outage. Further refusals double the park up to ForbiddenPark; a success
// starts over.
func TestForbiddenParkGrowsWithRefusals(t *testing.T) {
	s, cs, _ := newTestSink(t)
	clk := s.clk.(*clocktesting.FakeClock)
	refuse := true
	cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refuse {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "e.7", errors.New("no RBAC yet"))
		}
		return false, nil, nil
	})
	ctx := context.Background()
	write := func(count int32) error {
		s.mu.Lock()
		s.failing = false // no jitter wait on the fake clock
		s.mu.Unlock()
		return s.Write(ctx, podEvent("e.7", count), false)
	}
	asked := func() int { return len(cs.Actions()) }
	// parkedFor asserts writes are held back, the API not asked, for
	// exactly d after a refusal.
	parkedFor := func(d time.Duration) {
		t.Helper()
		clk.Step(d - time.Millisecond)
		before := asked()
		if err := write(1); !apierrors.IsForbidden(err) || asked() != before {
			t.Fatalf("%v after a refusal: %v, API asked %d times; want held back without asking",
				d-time.Millisecond, err, asked()-before)
		}
		clk.Step(time.Millisecond)
	}
	if err := write(1); !apierrors.IsForbidden(err) {
		t.Fatalf("first write: %v, want Forbidden", err)
	}
	parkedFor(firstPark)
	for _, d := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, DefaultForbiddenPark, DefaultForbiddenPark} {
		before := asked()
		if err := write(1); !apierrors.IsForbidden(err) || asked() == before {
			t.Fatalf("write after the park: %v, API asked %d times; want the API's Forbidden", err, asked()-before)
		}
		parkedFor(d)
	}
	refuse = false
	if err := write(2); err != nil {
		t.Fatalf("write once granted: %v", err)
	}
	refuse = true
	if err := write(3); !apierrors.IsForbidden(err) {
		t.Fatalf("write refused again: %v", err)
	}
	parkedFor(firstPark) // the success started over
}

// Refusals from a server that was just down (no answer, 5xx) are its RBAC
// authorizer still syncing: they park nothing, however many, for
// ForbiddenPark after the last such answer; then a refusal parks again.
func TestRefusalsRightAfterTheAPIWasDownDoNotPark(t *testing.T) {
	s, cs, lb := newTestSink(t)
	clk := s.clk.(*clocktesting.FakeClock)
	answer := error(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, answer
	})
	ctx := context.Background()
	asked := func() int { return len(cs.Actions()) }
	write := func() error {
		s.mu.Lock()
		s.failing = false // no jitter wait on the fake clock
		s.mu.Unlock()
		return s.Write(ctx, podEvent("e.8", 1), false)
	}
	if err := write(); err == nil || errors.Is(err, events.ErrPermanent) {
		t.Fatalf("write to an unreachable API: %v, want retryable", err)
	}
	clk.Step(time.Second)
	answer = apierrors.NewServiceUnavailable("not ready")
	if err := write(); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("write: %v, want 503", err)
	}
	answer = apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "e.8", errors.New("RBAC not synced"))
	for range 20 {
		clk.Step(5 * time.Second)
		before := asked()
		if err := write(); !apierrors.IsForbidden(err) || asked() == before {
			t.Fatalf("at +%v after the 503: %v, API asked %d times; want the API's own refusal, not a park",
				clk.Since(t0.Add(time.Second)), err, asked()-before)
		}
	}
	if strings.Contains(lb.String(), "refused podwatch's credentials") {
		t.Errorf("refusals of a server coming back up logged as an RBAC problem:\n%s", lb.String())
	}
	// Past ForbiddenPark since the API last failed to serve: a refusal is
	// taken at its word, logged and parked.
	clk.Step(DefaultForbiddenPark)
	if err := write(); !apierrors.IsForbidden(err) {
		t.Fatalf("refusal long after the outage: %v", err)
	}
	before := asked()
	if err := write(); !apierrors.IsForbidden(err) || asked() != before {
		t.Fatalf("write right after: %v, API asked %d times; want held back", err, asked()-before)
	}
	if !strings.Contains(lb.String(), "refused podwatch's credentials") {
		t.Errorf("a lasting refusal not logged:\n%s", lb.String())
	}
}

func TestForbiddenParksWritesWithoutAskingTheAPI(t *testing.T) {
	s, cs, _ := newTestSink(t)
	refuse := true
	cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refuse {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "e.9", errors.New("no RBAC"))
		}
		return false, nil, nil
	})
	creates := func() int {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "create" && a.GetResource().Resource == "events" {
				n++
			}
		}
		return n
	}
	ctx := context.Background()
	if err := s.Write(ctx, podEvent("e.9", 1), false); !apierrors.IsForbidden(err) {
		t.Fatalf("first write: %v, want Forbidden", err)
	}
	refuse = false
	for range 3 {
		err := s.Write(ctx, podEvent("e.9", 2), false)
		if err == nil || errors.Is(err, events.ErrPermanent) || !apierrors.IsForbidden(err) {
			t.Fatalf("parked write: %v, want a retryable error that still reads as Forbidden", err)
		}
	}
	if n := creates(); n != 1 {
		t.Fatalf("the API was asked %d times while parked, want once", n)
	}
	clk := s.clk.(*clocktesting.FakeClock)
	clk.Step(DefaultForbiddenPark)
	s.mu.Lock()
	s.failing = false // no jitter wait on the fake clock
	s.mu.Unlock()
	if err := s.Write(ctx, podEvent("e.9", 4), false); err != nil {
		t.Fatalf("write after the park: %v", err)
	}
	if got := getEvent(t, cs, "kube-system", "e.9"); got.Count != 4 {
		t.Fatalf("count after the park = %d, want 4", got.Count)
	}
}

func TestMissingNamespaceRetargetsAtNode(t *testing.T) {
	s, cs, _ := newTestSink(t)
	cs.PrependReactor("create", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if ns := a.GetNamespace(); ns == "kube-system" {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
		}
		return false, nil, nil
	})
	ctx := context.Background()
	if err := s.Write(ctx, podEvent("e.7", 1), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, podEvent("e.7", 3), true); err != nil {
		t.Fatal(err)
	}
	got := getEvent(t, cs, "default", "e.7")
	if got.InvolvedObject.Kind != "Node" || got.InvolvedObject.UID != node || got.Count != 3 ||
		!strings.Contains(got.Message, "kube-system/etcd-"+node) || got.Annotations[AnnotationRetargeted] == "" {
		t.Errorf("re-targeted event = %+v", got)
	}
}

func TestMirrorUIDRefreshedAfterUpdate(t *testing.T) {
	s, cs, _ := newTestSink(t, mirrorPod("hash1"))
	ctx := context.Background()
	if err := s.Write(ctx, podEvent("e.8", 1), false); err != nil {
		t.Fatal(err)
	}
	// The kubelet recreated the mirror pod with the new config hash.
	if _, err := cs.CoreV1().Pods("kube-system").Update(ctx, mirrorPod("hash2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	up := podEvent("e.9", 1)
	up.Reason = types.ReasonUpdated
	up.FirstTimestamp = metav1.NewTime(t0.Add(time.Second)) // after the cached read
	if err := s.Write(ctx, up, false); err != nil {
		t.Fatal(err)
	}
	if got := getEvent(t, cs, "kube-system", "e.9"); got.InvolvedObject.UID != "hash2" {
		t.Errorf("uid = %q, want hash2", got.InvolvedObject.UID)
	}
}

func TestNoMirrorPodStillWrites(t *testing.T) {
	s, cs, _ := newTestSink(t)
	if err := s.Write(context.Background(), podEvent("e.10", 1), false); err != nil {
		t.Fatal(err)
	}
	if got := getEvent(t, cs, "kube-system", "e.10"); got.InvolvedObject.UID != "" {
		t.Errorf("uid = %q, want none", got.InvolvedObject.UID)
	}
}

// change is a StaticPodAdded or StaticPodUpdated first seen at first,
// which the API sink holds back until the kubelet made the mirror pod for it.
func change(name, reason string, first time.Time) *v1.Event {
	ev := podEvent(name, 1)
	ev.Reason, ev.Message = reason, "changed"
	ev.FirstTimestamp, ev.LastTimestamp = metav1.NewTime(first), metav1.NewTime(first)
	return ev
}

func mirrorCreatedAt(hash string, at time.Time) *v1.Pod {
	p := mirrorPod(hash)
	p.CreationTimestamp = metav1.NewTime(at)
	return p
}

// The kubelet creates the mirror pod once it syncs the static pod: a
// StaticPodAdded written before then is held back (NotYet, nothing
// created), so `kubectl describe pod`, which selects by the mirror pod's
// config hash, shows it. A StaticPodFound (a first start, maybe a boot) is
// held alike.
func TestAddedHeldUntilTheMirrorPod(t *testing.T) {
	for _, reason := range []string{types.ReasonAdded, types.ReasonFound} {
		t.Run(reason, func(t *testing.T) {
			s, cs, _ := newTestSink(t)
			ctx := context.Background()
			ev := change("e.11", reason, t0)
			if err := s.Write(ctx, ev, false); !errors.Is(err, events.ErrNotYet) {
				t.Fatalf("write before the mirror pod: %v, want ErrNotYet", err)
			}
			if _, err := cs.CoreV1().Events("kube-system").Get(ctx, "e.11", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("the Event was created before its mirror pod: %v", err)
			}
			if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, mirrorPod("hash1"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, ev, false); err != nil {
				t.Fatal(err)
			}
			if got := getEvent(t, cs, "kube-system", "e.11"); got.InvolvedObject.UID != "hash1" {
				t.Errorf("uid = %q, want hash1, the mirror pod's", got.InvolvedObject.UID)
			}
		})
	}
}

// Without a mirror pod (a kubelet without an API server, a namespace the
// cluster lacks) a StaticPodAdded, and a StaticPodUpdated that finds none
// either (none is coming), is written addedWait after it was first held
// back, without a uid, and giving up is logged.
func TestWithoutMirrorPodHeldAtMostAddedWait(t *testing.T) {
	for _, reason := range []string{types.ReasonAdded, types.ReasonUpdated} {
		t.Run(reason, func(t *testing.T) {
			s, cs, lb := newTestSink(t)
			clk := s.clk.(*clocktesting.FakeClock)
			ctx := context.Background()
			ev := change("e.12", reason, t0)
			for clk.Since(t0) < addedWait {
				if err := s.Write(ctx, ev, false); !errors.Is(err, events.ErrNotYet) {
					t.Fatalf("write %v after the first: %v, want ErrNotYet", clk.Since(t0), err)
				}
				clk.Step(time.Second)
			}
			if err := s.Write(ctx, ev, false); err != nil {
				t.Fatal(err)
			}
			if got := getEvent(t, cs, "kube-system", "e.12"); got.InvolvedObject.UID != "" {
				t.Errorf("uid = %q, want none", got.InvolvedObject.UID)
			}
			if !strings.Contains(lb.String(), "no mirror pod") {
				t.Errorf("giving up on the mirror pod was not logged:\n%s", lb.String())
			}
		})
	}
}

// After an update the kubelet deletes the mirror pod and creates the new
// one when it starts the new pod, seconds later: the StaticPodUpdated is
// held back until a mirror pod created since the change, or with another
// hash than the one seen before it, is there.
func TestUpdatedHeldUntilTheNewMirrorPod(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cached bool // the sink read the old mirror pod before the change
	}{{"old hash known", true}, {"after a restart", false}} {
		t.Run(tc.name, func(t *testing.T) {
			old := mirrorCreatedAt("hash1", t0.Add(-time.Hour))
			s, cs, _ := newTestSink(t, old)
			clk := s.clk.(*clocktesting.FakeClock)
			ctx := context.Background()
			if tc.cached {
				if err := s.Write(ctx, podEvent("e.13", 1), false); err != nil {
					t.Fatal(err)
				}
			}
			clk.Step(time.Second)
			up := change("e.14", types.ReasonUpdated, clk.Now())
			if err := s.Write(ctx, up, false); !errors.Is(err, events.ErrNotYet) {
				t.Fatalf("write under the old mirror pod: %v, want ErrNotYet", err)
			}
			if err := cs.CoreV1().Pods("kube-system").Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, up, false); !errors.Is(err, events.ErrNotYet) {
				t.Fatalf("write with no mirror pod: %v, want ErrNotYet", err)
			}
			clk.Step(14 * time.Second)
			// Recreated within the second of the change it is told apart
			// only by its hash, from the read before the change.
			created := clk.Now()
			if tc.cached {
				created = up.FirstTimestamp.Time
			}
			if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, mirrorCreatedAt("hash2", created), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, up, false); err != nil {
				t.Fatal(err)
			}
			if got := getEvent(t, cs, "kube-system", "e.14"); got.InvolvedObject.UID != "hash2" {
				t.Errorf("uid = %q, want hash2, the new mirror pod's", got.InvolvedObject.UID)
			}
		})
	}
}

func TestRestoreListsOnlyWhatLocalLacks(t *testing.T) {
	apiNode := v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: node + ".1"},
		InvolvedObject: events.NodeRef(node), Source: v1.EventSource{Component: events.Component, Host: node}, Count: 4}
	apiPod := *podEvent("p.1", 9)
	apiPod.InvolvedObject.UID = "hash1"
	cs := fake.NewClientset(&apiNode, &apiPod)
	local := []v1.Event{*podEvent("p.0", 2)}
	got := Restore(context.Background(), typed{cs.CoreV1()}, node, local, nil, events.PodRef("ns2", "other"))
	// Node is lacking locally: listed; the local pod is not; "other" is.
	if want := "list events, list events"; verbs(cs) != want {
		t.Errorf("requests = %s; want %s", verbs(cs), want)
	}
	for _, a := range cs.Actions() {
		if sel := a.(clienttesting.ListAction).GetListRestrictions().Fields.String(); !strings.Contains(sel, "involvedObject.name=") {
			t.Errorf("list without an involvedObject field selector: %q", sel)
		}
	}
	if len(got) != 2 || got[1].Name != node+".1" {
		t.Errorf("restored = %v", got)
	}
}

func TestRestoreForbiddenFallsBackToLocal(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New("no list"))
	})
	local := []v1.Event{*podEvent("p.0", 2)}
	if got := Restore(context.Background(), typed{cs.CoreV1()}, node, local, nil); len(got) != 1 {
		t.Errorf("restored %d events, want the 1 local", len(got))
	}
}

func TestErrorsCarryTheirCode(t *testing.T) {
	s, cs, _ := newTestSink(t)
	status := apierrors.NewServiceUnavailable("etcd down")
	cs.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, status
	})
	err := s.Write(context.Background(), podEvent("e.10", 1), false)
	if got := events.ErrorCode(err); got != "503" {
		t.Fatalf("code of %v = %q, want 503", err, got)
	}
	if got := events.ErrorCode(errors.New("plain")); got != events.CodeUnknown {
		t.Fatalf("code of a plain error = %q", got)
	}
}
