package eventlist

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func storedEvent(name, typ, reason, kind, obj string, count int32, first, last time.Time) v1.Event {
	return v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default"},
		InvolvedObject: v1.ObjectReference{Kind: kind, Name: obj},
		Type:           typ, Reason: reason, Message: reason + " message",
		Count: count, FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(last),
	}
}

func TestSelectAndPrintEvents(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	evs := []v1.Event{
		storedEvent("b", "Warning", "InvalidManifest", "Node", "node-1", 7, now.Add(-2*time.Hour), now.Add(-5*time.Minute)),
		storedEvent("a", "Normal", "StaticPodAdded", "Pod", "etcd-node-1", 1, now.Add(-3*time.Hour), now.Add(-3*time.Hour)),
		storedEvent("c", "Normal", "StaticPodUpdated", "Pod", "etcd-node-1", 2, now.Add(-time.Hour), now.Add(-30*time.Second)),
	}
	evs[2].Annotations = map[string]string{"podwatch.io/detail": "on the way the kubelet's watch may have taken in sedXyZ12a"}
	all := Select(evs, Options{Output: "wide"})
	if got := []string{all[0].Name, all[1].Name, all[2].Name}; strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("order = %v, want oldest last seen first: a,b,c", got)
	}
	var out bytes.Buffer
	if err := WriteWide(&out, all, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAMESPACE") || !strings.Contains(lines[0], "LAST SEEN") || !strings.Contains(lines[0], "FIRST SEEN") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, want := range []string{"5m", "Warning", "InvalidManifest", "node/node-1", "7", "120m"} {
		if !strings.Contains(lines[2], want) {
			t.Fatalf("row %q lacks %q", lines[2], want)
		}
	}
	if h := strings.Fields(lines[0]); h[len(h)-1] != "DETAIL" || !strings.HasSuffix(lines[3], "StaticPodUpdated message   on the way the kubelet's watch may have taken in sedXyZ12a") {
		t.Fatalf("the detail is not the last column:\n%s", out.String())
	}
	if !strings.Contains(lines[3], "30s") || !strings.Contains(lines[1], "3h") {
		t.Fatalf("ages wrong:\n%s", out.String())
	}

	pods := Select(evs, Options{For: "pod/etcd-node-1"})
	if len(pods) != 2 || pods[0].Name != "a" {
		t.Fatalf("--for pod/etcd-node-1 = %d events", len(pods))
	}
	warn := Select(evs, Options{Types: []string{"Warning"}})
	if len(warn) != 1 || warn[0].Reason != "InvalidManifest" {
		t.Fatalf("--types Warning = %+v", warn)
	}

	out.Reset()
	if err := WriteJSON(&out, warn); err != nil {
		t.Fatal(err)
	}
	var list v1.EventList
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || list.Kind != "List" || len(list.Items) != 1 || list.Items[0].Kind != "Event" {
		t.Fatalf("json list = %+v err %v", list, err)
	}
}

func TestEventsOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Output: "yaml"},
		{Output: "wide", For: "etcd"},
		{Output: "wide", Types: []string{"Error"}},
	} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := (&Options{Output: "json", For: "node/n", Types: []string{"Normal"}}).Validate(); err != nil {
		t.Fatal(err)
	}
}
