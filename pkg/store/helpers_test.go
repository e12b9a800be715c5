package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// A Store is a pkg/events Sink by method set.
var _ interface {
	Write(ctx context.Context, ev *v1.Event, update bool) error
} = (*Store)(nil)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func newClock() *clocktesting.FakePassiveClock { return clocktesting.NewFakePassiveClock(t0) }

// event builds an Event shaped like the ones pkg/events records.
func event(name string, count int32, last time.Time) *v1.Event {
	return &v1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		InvolvedObject: v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "kube-system", Name: "etcd-node-1"},
		Reason:         "InvalidManifest",
		Message:        "etcd.yaml: line 12: unknown field \"spec.containers[0].imagePullPolicyy\"",
		Type:           "Warning",
		Source:         v1.EventSource{Component: "podwatch", Host: "node-1"},
		FirstTimestamp: metav1.NewTime(t0),
		LastTimestamp:  metav1.NewTime(last),
		Count:          count,
	}
}

func name(i int) string { return fmt.Sprintf("etcd-node-1.%016x", i) }

func open(t testing.TB, dir string, opts Options, clk clock.PassiveClock) *Store {
	t.Helper()
	s, err := Open(dir, opts, clk, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func write(t testing.TB, s *Store, ev *v1.Event) {
	t.Helper()
	if err := s.Write(context.Background(), ev, ev.Count > 1); err != nil {
		t.Fatalf("Write %s: %v", ev.Name, err)
	}
}

func closeStore(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// counts maps Event name to count.
func counts(evs []v1.Event) map[string]int32 {
	m := make(map[string]int32, len(evs))
	for _, ev := range evs {
		m[ev.Name] = ev.Count
	}
	return m
}

func equalCounts(t testing.TB, what string, got []v1.Event, want map[string]int32) {
	t.Helper()
	g := counts(got)
	if len(got) != len(g) {
		t.Errorf("%s: %d events but %d names: duplicates", what, len(got), len(g))
	}
	if len(g) != len(want) {
		t.Errorf("%s: %d events, want %d", what, len(g), len(want))
	}
	for n, c := range want {
		if g[n] != c {
			t.Errorf("%s: %s count %d, want %d", what, n, g[n], c)
		}
	}
}

func logPath(dir string) string { return filepath.Join(dir, logName) }

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// noSync skips fdatasync, for tests that write tens of thousands of records
// and check logic, not durability.
func noSync(*os.File) error { return nil }
