package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestDecodeKubeAPIServer(t *testing.T) {
	p := mustDecode(t, string(readTestdata(t, "kube-apiserver.yaml")))
	if p.Key != "kube-system/kube-apiserver-node-1" {
		t.Errorf("Key = %q", p.Key)
	}
	if len(p.Ignored) != 0 {
		t.Errorf("Ignored = %v, want none", p.Ignored)
	}
	pod := mustObject(t, p)
	c := pod.Spec.Containers[0]
	if c.TerminationMessagePath != "/dev/termination-log" || c.TerminationMessagePolicy != v1.TerminationMessageReadFile {
		t.Errorf("termination message defaults not applied: %q %q", c.TerminationMessagePath, c.TerminationMessagePolicy)
	}
	if got := c.LivenessProbe.SuccessThreshold; got != 1 {
		t.Errorf("liveness successThreshold = %d, want defaulted 1", got)
	}
	if pod.Spec.NodeName != testNode || pod.Status.Phase != v1.PodPending {
		t.Errorf("static defaults missing: nodeName %q phase %q", pod.Spec.NodeName, pod.Status.Phase)
	}
}

func TestDecodeDefaults(t *testing.T) {
	p := mustDecode(t, withSpec(`hostNetwork: true
containers:
- name: a
  image: nginx
  ports:
  - containerPort: 80
  resources:
    limits: {cpu: "0.5"}
- name: b
  image: registry.local:5000/team/app:v2
- name: c
  image: nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
- name: d
  image: nginx:latest
volumes:
- name: scratch
`))
	pod := mustObject(t, p)
	s := pod.Spec
	if pod.Namespace != "default" || pod.Name != "web-node-1" {
		t.Errorf("namespace/name = %s/%s", pod.Namespace, pod.Name)
	}
	if s.RestartPolicy != v1.RestartPolicyAlways || s.DNSPolicy != v1.DNSClusterFirst || s.SchedulerName != "default-scheduler" {
		t.Errorf("spec defaults: %q %q %q", s.RestartPolicy, s.DNSPolicy, s.SchedulerName)
	}
	if s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 30 || s.SecurityContext == nil {
		t.Errorf("grace period / securityContext not defaulted")
	}
	wantPull := []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullIfNotPresent, v1.PullAlways}
	for i, want := range wantPull {
		if got := s.Containers[i].ImagePullPolicy; got != want {
			t.Errorf("containers[%d] (%s) imagePullPolicy = %s, want %s", i, s.Containers[i].Image, got, want)
		}
	}
	port := s.Containers[0].Ports[0]
	if port.Protocol != v1.ProtocolTCP || port.HostPort != 80 {
		t.Errorf("port defaults: %+v", port)
	}
	if req := s.Containers[0].Resources.Requests[v1.ResourceCPU]; req.String() != "500m" {
		t.Errorf("requests.cpu = %s, want limits copied as 500m", req.String())
	}
	if s.Volumes[0].EmptyDir == nil {
		t.Errorf("volume without a source should default to emptyDir")
	}
	if n := len(s.Tolerations); n != 1 || s.Tolerations[0].Effect != v1.TaintEffectNoExecute || s.Tolerations[0].Operator != v1.TolerationOpExists {
		t.Errorf("NoExecute toleration not added: %+v", s.Tolerations)
	}
}

func TestDecodeJSON(t *testing.T) {
	js := `{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "etcd", "namespace": "kube-system"},
  "spec": {
    "containers": [
      {"name": "etcd", "image": "registry.k8s.io/etcd:3.6.0-0",
       "imagePullPolicyy": "Never"}
    ]
  }
}`
	p := mustDecode(t, js)
	if p.Key != "kube-system/etcd-node-1" {
		t.Errorf("Key = %q", p.Key)
	}
	if len(p.Ignored) != 1 || p.Ignored[0].Line != 8 || !strings.Contains(p.Ignored[0].What, `"spec.containers[0].imagePullPolicyy"`) {
		t.Errorf("Ignored = %+v, want the typo on line 8", p.Ignored)
	}

	bad := strings.Replace(js, `"image": "registry.k8s.io/etcd:3.6.0-0",`, `"image": "",`, 1)
	e := mustFail(t, bad)
	if e.Line != 7 || !strings.Contains(e.Msg, "spec.containers[0].image: Required value") {
		t.Errorf("got line %d %q", e.Line, e.Msg)
	}
}

func TestDecodeRejectsNonPods(t *testing.T) {
	tests := []struct {
		name, data, want string
		line             int
	}{
		{"empty", "", "kind: Required value", 0},
		{"comment only", "# nothing\n", "kind: Required value", 0},
		{"scalar", "hello\n", "cannot unmarshal string into a Pod", 1},
		{"number", "42\n", "cannot unmarshal number into a Pod", 1},
		{"list", "- apiVersion: v1\n  kind: Pod\n", "cannot unmarshal array into a Pod", 1},
		{"no kind", "apiVersion: v1\nmetadata:\n  name: a\n", "kind: Required value", 1},
		{"no apiVersion", "kind: Pod\nmetadata:\n  name: a\n", "apiVersion: Required value", 1},
		{"wrong group", "apiVersion: apps/v1\nkind: Deployment\n", `apiVersion: Unsupported value: "apps/v1": no kind "Deployment" is registered for version "apps/v1"`, 1},
		{"bad group version", "apiVersion: a/b/c\nkind: Pod\n", `apiVersion: Invalid value: "a/b/c"`, 1},
		{"deployment", "apiVersion: v1\nkind: Deployment\n", `kind: Unsupported value: "Deployment"`, 2},
		{"pod list", "apiVersion: v1\nkind: PodList\nitems: []\n", `kind: Unsupported value: "PodList"`, 2},
		{"yaml syntax", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n", "yaml:", 0},
		{"tab indentation", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: a\n", "yaml: found character that cannot start any token", 4},
		{"flow mapping read as JSON", "{apiVersion: v1, kind: Pod}\n", "invalid JSON", 1},
		{"json syntax", "{\"apiVersion\": \"v1\",\n\"kind\": \"Pod\",\n}\n", "invalid JSON", 3},
		{"json trailing document", `{"apiVersion":"v1","kind":"Pod"} {"a":1}`, "invalid JSON", 1},
		{"no name", "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: a\nspec: {}\n", "metadata.name: Required value: name is needed for the pod", 3},
		{"wrong type", withSpec("containers:\n- name: a\n  image: b\n  ports:\n  - containerPort: http\n"), "spec.containers[0].ports[0].containerPort: Invalid value: expected an integer, got a string", 10},
		{"yaml 1.1 boolean", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: on\n", "metadata.name: Invalid value: expected a string, got a boolean", 4},
		{"bad quantity", withSpec("containers:\n- name: a\n  image: b\n  resources:\n    limits:\n      memory: 1 GB\n"), "spec.containers[0].resources.limits[memory]: Invalid value: not a valid Quantity: quantities must match", 11},
		{"object for list", withSpec("containers:\n  name: a\n"), "spec.containers: Invalid value: expected a list, got an object", 6},
		{"mapping key is a list", "apiVersion: v1\nkind: Pod\n? [a, b]\n: c\n", "yaml: a mapping key is itself a mapping or a sequence", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustFail(t, tt.data)
			if !strings.Contains(e.Msg, tt.want) {
				t.Errorf("Msg = %q, want it to contain %q", e.Msg, tt.want)
			}
			if tt.line != 0 && e.Line != tt.line {
				t.Errorf("Line = %d, want %d (Msg %q)", e.Line, tt.line, e.Msg)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	data := make([]byte, MaxSize)
	_, err := Decode(data, Options{NodeName: testNode})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	// One byte less is read (and here rejected for its content, not size).
	_, err = Decode(data[:MaxSize-1], Options{NodeName: testNode})
	if errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxSize-1 bytes must not be too large")
	}
}

func TestDecodeOnlyFirstDocument(t *testing.T) {
	p := mustDecode(t, withSpec(oneContainer)+"---\napiVersion: v1\nkind: Pod\nmetadata: {name: other}\n")
	if p.Key != "default/web-node-1" {
		t.Errorf("Key = %q", p.Key)
	}
	if len(p.Ignored) != 1 || p.Ignored[0].Line != 9 || !strings.Contains(p.Ignored[0].What, "second YAML document") {
		t.Errorf("Ignored = %+v", p.Ignored)
	}
	// A broken second document is never read by the kubelet either.
	p = mustDecode(t, withSpec(oneContainer)+"---\nfoo: [\n")
	if len(p.Ignored) != 1 || !strings.Contains(p.Ignored[0].What, "after the first YAML document") {
		t.Errorf("Ignored = %+v", p.Ignored)
	}
	// Empty trailing documents are not worth a warning.
	p = mustDecode(t, withSpec(oneContainer)+"---\n")
	if len(p.Ignored) != 0 {
		t.Errorf("Ignored = %+v, want none", p.Ignored)
	}
}

func TestDecodeYAMLFeatures(t *testing.T) {
	// Anchors, merge keys, YAML 1.1 numbers: resolved as the kubelet does.
	p := mustDecode(t, withSpec(`containers:
- &base
  name: a
  image: nginx:1.27
  ports:
  - containerPort: 0x50
- <<: *base
  name: b
  ports:
  - containerPort: 8080.0
`))
	cs := mustObject(t, p).Spec.Containers
	if cs[1].Image != "nginx:1.27" || cs[0].Ports[0].ContainerPort != 80 || cs[1].Ports[0].ContainerPort != 8080 {
		t.Errorf("containers = %+v", cs)
	}
	if len(p.Ignored) != 0 {
		t.Errorf("Ignored = %+v, want none", p.Ignored)
	}
}

func TestDecodeKindCaseInsensitive(t *testing.T) {
	// The kind check reads apiVersion/kind case-insensitively.
	p := mustDecode(t, "APIVersion: v1\nKind: Pod\nmetadata:\n  name: web\nspec:\n  "+strings.ReplaceAll(oneContainer, "\n", "\n  "))
	if len(p.Ignored) != 0 {
		t.Errorf("Ignored = %+v, want none", p.Ignored)
	}
}

func TestAliasBombRefused(t *testing.T) {
	// Few aliases to a large anchor pass the YAML library's ratio check but
	// would expand to ~500 MiB.
	big := strings.Repeat("x", 5<<20)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    a: &big " + big + "\n")
	b.WriteString("spec:\n  containers:\n  - name: a\n    image: b\n    args: [")
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("*big")
	}
	b.WriteString("]\n")
	_, err := Decode([]byte(b.String()), Options{NodeName: testNode})
	if !errors.Is(err, ErrTooComplex) {
		t.Fatalf("err = %v, want ErrTooComplex", err)
	}

	// The classic billion laughs is refused by the YAML library itself.
	_, err = Decode([]byte(billionLaughs()), Options{NodeName: testNode})
	if err == nil {
		t.Fatal("billion laughs decoded")
	}
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for k := 0; k < 9; k++ {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestImageTag(t *testing.T) {
	tests := map[string]string{
		"nginx":                        "latest",
		"nginx:1.27":                   "1.27",
		"nginx:latest":                 "latest",
		"registry.local:5000/a/b":      "latest",
		"registry.local:5000/a/b:v1":   "v1",
		"localhost/app:dev":            "dev",
		"Registry.Example.com/app:1":   "1",
		"nginx@sha256:" + hex64:        "",
		"nginx:latest@sha256:" + hex64: "latest",
		"Nginx":                        "",
		"nginx:":                       "",
		"":                             "",
		hex64:                          "",
		"[::1]:5000/app":               "latest",
	}
	for in, want := range tests {
		if got := imageTag(in); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", in, got, want)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// A YAML syntax error names its line once: Error prints it, so the parser's
// own "line N:" must not follow it.
func TestDecodeYAMLSyntaxErrorSaysLineOnce(t *testing.T) {
	files, err := filepath.Glob("testdata/syntax/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/syntax files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			e := mustFail(t, string(data))
			if e.Line == 0 {
				t.Fatalf("no line for %q", e.Error())
			}
			prefix := fmt.Sprintf("line %d: yaml: ", e.Line)
			if !strings.HasPrefix(e.Error(), prefix) {
				t.Errorf("Error() = %q, want it to start with %q", e.Error(), prefix)
			}
			if n := strings.Count(e.Error(), "line "); n != 1 {
				t.Errorf("Error() = %q names a line %d times, want once", e.Error(), n)
			}
		})
	}
}
