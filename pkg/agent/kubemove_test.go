package agent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/kube"
)

// coreAPI serves the few core/v1 requests the agent makes: Events created,
// patched and listed, and one mirror pod, which the test creates.
type coreAPI struct {
	mu     sync.Mutex
	mirror string               // the mirror pod's config hash; "" before it exists
	events map[string]*v1.Event // by name
	moves  []string             // bodies of the patches that set involvedObject
}

func (a *coreAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	dir, name := path.Split(r.URL.Path)
	reply := func(code int, obj any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(obj)
	}
	notFound := func() {
		reply(http.StatusNotFound, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
	}
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(dir, "/pods/"):
		if a.mirror == "" || name != "etcd-node-1" {
			notFound()
			return
		}
		reply(http.StatusOK, v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, Annotations: map[string]string{kube.MirrorAnnotation: a.mirror}}})
	case r.Method == http.MethodGet && name == "events":
		reply(http.StatusOK, v1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}})
	case r.Method == http.MethodPost && name == "events":
		ev := &v1.Event{}
		if err := json.Unmarshal(body, ev); err != nil {
			reply(http.StatusBadRequest, metav1.Status{Code: http.StatusBadRequest})
			return
		}
		a.events[ev.Name] = ev
		reply(http.StatusCreated, ev)
	case r.Method == http.MethodPatch && strings.HasSuffix(dir, "/events/"):
		ev := a.events[name]
		if ev == nil {
			notFound()
			return
		}
		var p struct {
			InvolvedObject *struct {
				UID string `json:"uid"`
			} `json:"involvedObject"`
		}
		_ = json.Unmarshal(body, &p)
		if p.InvolvedObject != nil {
			ev.InvolvedObject.UID = ktypes.UID(p.InvolvedObject.UID)
			a.moves = append(a.moves, string(body))
		}
		reply(http.StatusOK, ev)
	default:
		notFound()
	}
}

func (a *coreAPI) uidOf(reason string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ev := range a.events {
		if ev.Reason == reason {
			return string(ev.InvolvedObject.UID), true
		}
	}
	return "", false
}

// The agent runs the API sink's moves: a StaticPodAdded written before the
// kubelet made the mirror pod is moved to it once it exists.
func TestAgentMovesAnAddToItsMirrorPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	api := &coreAPI{events: map[string]*v1.Event{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kubeconfig := writeKubeconfig(t, srv.URL)
	o := etcdOptions(t)
	o.Kube.Kubeconfig = kubeconfig
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs testutil.LockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(o, Env{Clock: clock.RealClock{}, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}).Run(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "StaticPodAdded in the API", func() bool { _, ok := api.uidOf("StaticPodAdded"); return ok })
	if uid, _ := api.uidOf("StaticPodAdded"); uid != "" {
		t.Fatalf("written with uid %q before there is a mirror pod", uid)
	}
	api.mu.Lock()
	api.mirror = "hash1"
	api.mu.Unlock()
	waitFor(t, "StaticPodAdded moved to the mirror pod", func() bool { uid, _ := api.uidOf("StaticPodAdded"); return uid == "hash1" })
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.moves) != 1 || api.moves[0] != `{"involvedObject":{"uid":"hash1"}}` {
		t.Errorf("moves %q, want one merge patch of involvedObject.uid", api.moves)
	}
}
