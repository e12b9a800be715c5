package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
	"github.com/podwatch/podwatch/test/tools/apiserver"
)

const (
	node      = "node-1"
	podNS     = "kube-system"
	podName   = "kube-apiserver-" + node
	deployDir = "../../../deploy/kubernetes"
	followDir = "../../../deploy/kubernetes-follow"
)

// logBuf is a concurrency-safe log destination tests can search.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// agent is a Recorder delivering to the API sink, and the sink's Run, as
// pkg/agent wires them.
type agent struct {
	rec    *events.Recorder
	client kube.API
	log    *logBuf
	stop   func()
}

// startAgent runs a Recorder delivering to the API sink, after the extra
// sinks given, and the sink's Run.
func startAgent(t *testing.T, cfg *rest.Config, restore []v1.Event, extra ...events.Registration) *agent {
	t.Helper()
	return startAgentWith(t, cfg, func(*events.Options) {}, restore, extra...)
}

// startAgentWith is startAgent with the Recorder's options changed by opt.
func startAgentWith(t *testing.T, cfg *rest.Config, opt func(*events.Options), restore []v1.Event, extra ...events.Registration) *agent {
	t.Helper()
	client, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lb := &logBuf{}
	log := slog.New(slog.NewTextHandler(lb, nil))
	sink, err := kube.NewSink(client, kube.SinkOptions{Node: node, Jitter: 200 * time.Millisecond, ForbiddenPark: 500 * time.Millisecond}, clock.RealClock{}, log)
	if err != nil {
		t.Fatal(err)
	}
	evOpts := events.Options{
		Host:         node,
		KeyInterval:  20 * time.Millisecond,
		QPS:          100,
		Burst:        100,
		RetryInitial: 100 * time.Millisecond,
		RetryMax:     time.Second,
		WriteTimeout: 5 * time.Second,
	}
	opt(&evOpts)
	rec, err := events.New(evOpts, clock.RealClock{}, log, append(extra, events.DeliverTo("api", sink)), restore)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	moving := make(chan error, 1)
	go func() { moving <- sink.Run(ctx) }()
	var once sync.Once
	a := &agent{rec: rec, client: client, log: lb}
	a.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
			if err := <-moving; err != nil {
				t.Errorf("sink Run: %v", err)
			}
			fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer fcancel()
			if err := rec.Flush(fctx); err != nil {
				t.Errorf("Flush: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		a.stop()
		if t.Failed() {
			t.Logf("agent log:\n%s", lb.String())
		}
	})
	return a
}

func (a *agent) record(t *testing.T, o events.Occurrence, n int) {
	t.Helper()
	for range n {
		if err := a.rec.Record(context.Background(), o); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
}

func (a *agent) apiStats() events.SinkStats {
	for _, s := range a.rec.Stats().Sinks {
		if s.Name == "api" {
			return s
		}
	}
	return events.SinkStats{}
}

// eventually polls cond until it holds or 60s pass; the API is the thing
// being waited for, so polling it is the synchronisation.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func admin(t *testing.T, s *apiserver.Server) corev1client.CoreV1Interface {
	t.Helper()
	c, err := corev1client.NewForConfig(s.Config(apiserver.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// describePodEvents lists Events the way `kubectl describe pod` does for a
// mirror pod: by name, namespace and uid = the config.mirror annotation.
func describePodEvents(ctx context.Context, c corev1client.CoreV1Interface, ns, name, uid string) ([]v1.Event, error) {
	sel := fields.Set{"involvedObject.name": name, "involvedObject.namespace": ns, "involvedObject.uid": uid}
	l, err := c.Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// describeNodeEvents lists Events the way `kubectl describe node` does: in
// every namespace, kind Node, uid = node name.
func describeNodeEvents(ctx context.Context, c corev1client.CoreV1Interface, name string) ([]v1.Event, error) {
	sel := fields.Set{"involvedObject.kind": "Node", "involvedObject.name": name, "involvedObject.uid": name}
	l, err := c.Events("").List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func byReason(evs []v1.Event, reason string) []v1.Event {
	var out []v1.Event
	for _, e := range evs {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// addedUnder creates the mirror pod with hash, as the kubelet does for a
// new static pod, records its ADD and waits until `kubectl describe pod`
// would find it.
func addedUnder(t *testing.T, a *agent, c corev1client.CoreV1Interface, hash string) {
	t.Helper()
	createMirrorPod(t, c, podNS, podName, hash)
	a.record(t, events.Occurrence{Object: events.PodRef(podNS, podName), Type: v1.EventTypeNormal,
		Reason: types.ReasonAdded, Message: "kube-apiserver.yaml: static pod added"}, 1)
	eventually(t, "ADD under "+hash, func(ctx context.Context) (bool, error) {
		evs, err := describePodEvents(ctx, c, podNS, podName, hash)
		return len(byReason(evs, types.ReasonAdded)) == 1, err
	})
}

// createMirrorPod creates what the kubelet would: a pod bound to the node,
// annotated with the static pod's config hash.
func createMirrorPod(t *testing.T, c corev1client.CoreV1Interface, ns, name, hash string) {
	t.Helper()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			kube.MirrorAnnotation:       hash,
			"kubernetes.io/config.hash": hash, "kubernetes.io/config.source": "file",
		}},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := c.Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create mirror pod: %v", err)
	}
}

// applyDeploy creates every object in deploy/kubernetes, parsed strictly into
// typed objects, so a typo in the YAML fails here.
func applyDeploy(t *testing.T, s *apiserver.Server) {
	t.Helper()
	cfg := s.Config(apiserver.AdminToken)
	core := admin(t, s)
	rbac, err := rbacclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	apps, err := appsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// In name order, as kubectl apply -f applies the folder: the numbered
	// names put the namespace before what lives in it.
	for _, f := range deployFiles(t) {
		data, err := os.ReadFile(filepath.Join(deployDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			if err := applyDoc(ctx, core, rbac, apps, []byte(doc)); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
		}
	}
}

// deployFiles are the .yaml files of deploy/kubernetes in name order: what
// kubectl apply -f reads from the folder.
func deployFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no .yaml files in %s", deployDir)
	}
	files := make([]string, len(paths))
	for i, p := range paths {
		files[i] = filepath.Base(p)
	}
	sort.Strings(files)
	return files
}

func applyDoc(ctx context.Context, core corev1client.CoreV1Interface, rbac rbacclient.RbacV1Interface, apps appsclient.AppsV1Interface, doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var err error
	switch tm.Kind {
	case "Namespace":
		var o v1.Namespace
		if err = yaml.UnmarshalStrict(doc, &o); err == nil {
			_, err = core.Namespaces().Create(ctx, &o, metav1.CreateOptions{})
		}
	case "ServiceAccount":
		var o v1.ServiceAccount
		if err = yaml.UnmarshalStrict(doc, &o); err == nil {
			_, err = core.ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		}
	case "ClusterRole":
		var o rbacv1.ClusterRole
		if err = yaml.UnmarshalStrict(doc, &o); err == nil {
			_, err = rbac.ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
		}
	case "ClusterRoleBinding":
		var o rbacv1.ClusterRoleBinding
		if err = yaml.UnmarshalStrict(doc, &o); err == nil {
			_, err = rbac.ClusterRoleBindings().Create(ctx, &o, metav1.CreateOptions{})
		}
	case "Service":
		var o v1.Service
		if err = yaml.UnmarshalStrict(doc, &o); err == nil {
			_, err = core.Services(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		}
	case "DaemonSet":
		var o appsv1.DaemonSet
		if err = yaml.UnmarshalStrict(doc, &o); err == nil {
			_, err = apps.DaemonSets(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		}
	default:
		return fmt.Errorf("unexpected kind %q", tm.Kind)
	}
	return err
}

// bindUser grants user the deploy ClusterRole, so tests with a static token
// run with exactly the DaemonSet's rights.
func bindUser(t *testing.T, s *apiserver.Server, user string) {
	t.Helper()
	rbac, err := rbacclient.NewForConfig(s.Config(apiserver.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "podwatch-test-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "podwatch"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(context.Background(), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serviceAccountToken asks the TokenRequest API for a token of the
// DaemonSet's ServiceAccount, as the kubelet would mount it.
func serviceAccountToken(t *testing.T, c corev1client.CoreV1Interface, ns, name string) string {
	t.Helper()
	tr, err := c.ServiceAccounts(ns).CreateToken(context.Background(), name, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	return tr.Status.Token
}

// setup starts a server with the deploy manifests applied and user
// "podwatch" bound to the podwatch ClusterRole.
func setup(t *testing.T) (*apiserver.Server, corev1client.CoreV1Interface) {
	t.Helper()
	s := apiserver.Start(t)
	applyDeploy(t, s)
	bindUser(t, s, apiserver.PodwatchUser)
	return s, admin(t, s)
}
