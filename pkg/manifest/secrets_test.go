package manifest

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Invalid manifests carrying secrets in the places operators put them: the
// error must name the field, never show the value.
func TestErrorsNeverEchoSecrets(t *testing.T) {
	const secret = "s3cr3t-hunter2"
	tests := map[string]string{
		"arg with other error":     withSpec("restartPolicy: Sometimes\ncontainers:\n- name: app\n  image: nginx\n  args: [--token=" + secret + "]\n  command: [run, --password=" + secret + "]"),
		"env value with valueFrom": withSpec(oneContainer + "  env:\n  - name: TOKEN\n    value: " + secret + "\n    valueFrom: {fieldRef: {fieldPath: metadata.name}}"),
		"env value as number":      withSpec(oneContainer + "  env:\n  - name: PIN\n    value: 1234567890"),
		"annotation value":         strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  annotations:\n    controller.kubernetes.io/pod-deletion-cost: "+secret+"\n", 1),
		"seccomp annotation":       strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  annotations:\n    seccomp.security.alpha.kubernetes.io/pod: "+secret+"\n", 1),
		"annotation and bad name":  strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: Web\n  annotations:\n    token: "+secret+"\n", 1),
		"probe command":            withSpec(oneContainer + "  livenessProbe:\n    exec: {command: [curl, -H, 'Authorization: " + secret + "']}\n    successThreshold: 3"),
		"header value":             withSpec(oneContainer + "  readinessProbe:\n    httpGet:\n      port: 0\n      httpHeaders: [{name: Authorization, value: " + secret + "}]"),
		"secret env ref":           withSpec(oneContainer + "  env:\n  - name: T\n    value: " + secret + "\n  - name: K\n    valueFrom: {secretKeyRef: {name: creds, key: token}}"),
		"args with bad yaml type":  withSpec("containers:\n- name: app\n  image: nginx\n  args: {token: " + secret + "}"),
		"json env":                 `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"` + secret + `"}]}]}}`,
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			e := mustFail(t, data)
			for _, s := range []string{secret, "1234567890"} {
				if strings.Contains(e.Error(), s) {
					t.Errorf("error echoes a secret: %v", e)
				}
			}
		})
	}
}

func TestRedactSafetyNet(t *testing.T) {
	msg := redact(`x: Invalid value: "--token=abcdef": bad`, []string{"--token=abcdef"})
	if strings.Contains(msg, "abcdef") {
		t.Errorf("redact left the secret: %q", msg)
	}
}

// TestRedactRemovesThePodsValues holds Redact to the values of the pod,
// a longer one containing a shorter one taken whole.
func TestRedactRemovesThePodsValues(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "main",
		Args: []string{"--token=s3cr3t-value", "--v=2"},
		Env:  []v1.EnvVar{{Name: "PASSWORD", Value: "s3cr3t"}, {Name: "KEY", Value: "hunter22"}},
	}}}}
	got := Redact(`flag --token=s3cr3t-value rejected; login with hunter22 failed; --v=2 kept`, pod)
	if want := `flag <redacted> rejected; login with <redacted> failed; --v=2 kept`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if got := Redact("no pod, nothing known", nil); got != "no pod, nothing known" {
		t.Errorf("Redact with no pod = %q", got)
	}
}
