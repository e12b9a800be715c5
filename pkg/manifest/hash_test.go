package manifest

import "testing"

func TestHashStable(t *testing.T) {
	base := mustDecode(t, withSpec(oneContainer)).Hash
	same := map[string]string{
		"comments and spacing": "# static pod\napiVersion:   v1\nkind: Pod   # kind\nmetadata:\n    name: web\nspec:\n    containers:\n    -   name: app\n        image: \"nginx:1.27\"\n",
		"key order":            "spec:\n  containers:\n  - image: nginx:1.27\n    name: app\nmetadata:\n  name: web\nkind: Pod\napiVersion: v1\n",
		"flow style":           "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: 'nginx:1.27'}]}\n",
		"json":                 `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"},"spec":{"containers":[{"image":"nginx:1.27","name":"app"}]}}`,
		"explicit defaults": withSpec("restartPolicy: Always\ndnsPolicy: ClusterFirst\nterminationGracePeriodSeconds: 30\nschedulerName: default-scheduler\n" +
			"containers:\n- name: app\n  image: nginx:1.27\n  imagePullPolicy: IfNotPresent\n  terminationMessagePath: /dev/termination-log"),
		"namespace default":  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n",
		"empty maps":         withSpec(oneContainer + "  env: []\nnodeSelector: {}"),
		"ignored typo field": withSpec(oneContainer + "  imagePullPolicyy: Always"),
	}
	for name, data := range same {
		if got := mustDecode(t, data).Hash; got != base {
			t.Errorf("%s: hash %s, want %s", name, got, base)
		}
	}
	changed := map[string]string{
		"image":         withSpec("containers:\n- name: app\n  image: nginx:1.28"),
		"arg":           withSpec(oneContainer + "  args: [--v=2]"),
		"pull policy":   withSpec(oneContainer + "  imagePullPolicy: Always"),
		"label":         "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: {a: b}\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n",
		"restartPolicy": withSpec("restartPolicy: Never\n" + oneContainer),
	}
	for name, data := range changed {
		if got := mustDecode(t, data).Hash; got == base {
			t.Errorf("%s: hash unchanged by a real change", name)
		}
	}
	// Quantities compare by value, not spelling.
	a := mustDecode(t, withSpec(oneContainer+"  resources: {requests: {cpu: 0.5, memory: 1Gi}}")).Hash
	b := mustDecode(t, withSpec(oneContainer+"  resources: {requests: {cpu: 500m, memory: 1024Mi}}")).Hash
	if a != b {
		t.Errorf("equal quantities hash differently")
	}
	// The node is part of the decoded pod.
	p, err := Decode([]byte(withSpec(oneContainer)), Options{NodeName: "node-2"})
	if err != nil || p.Hash == base {
		t.Errorf("hash must depend on the node: %v", err)
	}
}
