package manifest

import (
	"strings"
	"testing"
)

// Each case breaks one rule. The manifest is header (5 lines) + spec, so
// spec line N of the snippet is file line N+5.
func TestValidationRules(t *testing.T) {
	tests := []struct {
		name, data, want string
		line             int
	}{
		{"name too long after node suffix", strings.Replace(withSpec(oneContainer), "name: web", "name: "+strings.Repeat("a", 247), 1),
			"metadata.name: Invalid value", 4},
		{"name not a subdomain", strings.Replace(withSpec(oneContainer), "name: web", "name: Web_1", 1),
			`metadata.name: Invalid value: "Web_1-node-1"`, 4},
		{"namespace not a label", strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  namespace: kube.system\n", 1),
			`metadata.namespace: Invalid value: "kube.system"`, 5},
		{"label key", strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  labels:\n    -bad: x\n", 1),
			`metadata.labels: Invalid value: "-bad"`, 5},
		{"label value", strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  labels:\n    app: a b\n", 1),
			`metadata.labels: Invalid value: "a b"`, 5},
		{"annotation key", strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  annotations:\n    bad key: x\n", 1),
			`metadata.annotations: Invalid value: "bad key"`, 5},
		{"annotations too large", strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  annotations:\n    big: "+strings.Repeat("x", 256*1024-20)+"\n", 1),
			"metadata.annotations: Too long: may not be more than 262144 bytes", 5},
		{"no containers", withSpec("containers: []"), "spec.containers: Required value", 6},
		{"missing containers", withSpec("restartPolicy: Always"), "spec.containers: Required value", 5},
		{"missing image", withSpec("containers:\n- name: app"), "spec.containers[0].image: Required value", 7},
		{"image whitespace", withSpec("containers:\n- name: app\n  image: ' nginx'"), `spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace`, 8},
		{"container name", withSpec("containers:\n- name: App\n  image: nginx"), `spec.containers[0].name: Invalid value: "App"`, 7},
		{"container name missing", withSpec("containers:\n- image: nginx"), "spec.containers[0].name: Required value", 7},
		{"duplicate container names", withSpec(oneContainer + "- name: app\n  image: b"), `spec.containers[1].name: Duplicate value: "app"`, 9},
		{"init container name clash", withSpec(oneContainer + "initContainers:\n- name: app\n  image: b"), `spec.initContainers[0].name: Duplicate value: "app"`, 10},
		{"port out of range", withSpec(oneContainer + "  ports:\n  - containerPort: 70000"), "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive", 10},
		{"port missing", withSpec(oneContainer + "  ports:\n  - name: http"), "spec.containers[0].ports[0].containerPort: Required value", 10},
		{"port protocol", withSpec(oneContainer + "  ports:\n  - containerPort: 80\n    protocol: HTTP"), `spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`, 11},
		{"port name", withSpec(oneContainer + "  ports:\n  - containerPort: 80\n    name: http_port"), `spec.containers[0].ports[0].name: Invalid value: "http_port"`, 11},
		{"duplicate port name", withSpec(oneContainer + "  ports:\n  - {containerPort: 80, name: web}\n  - {containerPort: 81, name: web}"), `spec.containers[0].ports[1].name: Duplicate value: "web"`, 11},
		{"host port conflict", withSpec(oneContainer + "  ports:\n  - {containerPort: 80, hostPort: 8080}\n  - {containerPort: 81, hostPort: 8080}"), `spec.containers[0].ports[1].hostPort: Duplicate value: "TCP//8080"`, 11},
		{"hostNetwork port mismatch", withSpec("hostNetwork: true\n" + oneContainer + "  ports:\n  - {containerPort: 80, hostPort: 8080}"), "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true", 11},
		{"restartPolicy", withSpec("restartPolicy: Sometimes\n" + oneContainer), `spec.restartPolicy: Unsupported value: "Sometimes"`, 6},
		{"dnsPolicy", withSpec("dnsPolicy: Cluster\n" + oneContainer), `spec.dnsPolicy: Unsupported value: "Cluster"`, 6},
		{"dnsPolicy None without config", withSpec("dnsPolicy: None\n" + oneContainer), "spec.dnsConfig: Required value", 5},
		{"imagePullPolicy", withSpec(oneContainer + "  imagePullPolicy: Sometimes"), `spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"`, 9},
		{"terminationMessagePolicy", withSpec(oneContainer + "  terminationMessagePolicy: Logs"), `spec.containers[0].terminationMessagePolicy: Unsupported value: "Logs"`, 9},
		{"requests over limits", withSpec(oneContainer + "  resources:\n    limits: {memory: 1Gi}\n    requests: {memory: 2Gi}"), `spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`, 11},
		{"negative quantity", withSpec(oneContainer + "  resources:\n    requests: {cpu: -1}"), `spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`, 10},
		{"unknown resource", withSpec(oneContainer + "  resources:\n    limits: {gpu: 1}"), `spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers`, 10},
		{"extended resource fraction", withSpec(oneContainer + "  resources:\n    limits: {example.com/dongle: 500m}"), `spec.containers[0].resources.requests[example.com/dongle]: Invalid value: "500m": must be an integer`, 10},
		{"volume name", withSpec(oneContainer + "volumes:\n- name: Data\n  emptyDir: {}"), `spec.volumes[0].name: Invalid value: "Data"`, 10},
		{"volume duplicate", withSpec(oneContainer + "volumes:\n- name: d\n  emptyDir: {}\n- name: d\n  emptyDir: {}"), `spec.volumes[1].name: Duplicate value: "d"`, 12},
		{"volume two sources", withSpec(oneContainer + "volumes:\n- name: d\n  emptyDir: {}\n  hostPath: {path: /x}"), "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type", 12},
		{"hostPath without path", withSpec(oneContainer + "volumes:\n- name: d\n  hostPath: {type: Directory}"), "spec.volumes[0].hostPath.path: Required value", 11},
		{"hostPath type", withSpec(oneContainer + "volumes:\n- name: d\n  hostPath: {path: /x, type: Dir}"), `spec.volumes[0].hostPath.type: Unsupported value: "Dir"`, 11},
		{"hostPath backsteps", withSpec(oneContainer + "volumes:\n- name: d\n  hostPath: {path: /a/../b}"), `spec.volumes[0].hostPath.path: Invalid value: "/a/../b": must not contain '..'`, 11},
		{"mount of undefined volume", withSpec(oneContainer + "  volumeMounts:\n  - {name: data, mountPath: /d}"), `spec.containers[0].volumeMounts[0].name: Not found: "data"`, 10},
		{"mount without path", withSpec(oneContainer + "  volumeMounts:\n  - {name: d}\nvolumes:\n- name: d"), "spec.containers[0].volumeMounts[0].mountPath: Required value", 10},
		{"duplicate mountPath", withSpec(oneContainer + "  volumeMounts:\n  - {name: d, mountPath: /d}\n  - {name: d, mountPath: /d}\nvolumes:\n- name: d"), `spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique`, 11},
		{"env name with =", withSpec(oneContainer + "  env:\n  - name: A=B\n    value: x"), `spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`, 10},
		{"env name missing", withSpec(oneContainer + "  env:\n  - value: x"), "spec.containers[0].env[0].name: Required value", 10},
		{"env value and valueFrom", withSpec(oneContainer + "  env:\n  - name: A\n    value: x\n    valueFrom: {fieldRef: {fieldPath: metadata.name}}"), "spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty", 12},
		{"env fieldRef path", withSpec(oneContainer + "  env:\n  - name: A\n    valueFrom: {fieldRef: {fieldPath: spec.bogus}}"), `spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.bogus"`, 11},
		{"probe without handler", withSpec(oneContainer + "  livenessProbe: {periodSeconds: 5}"), "spec.containers[0].livenessProbe: Required value: must specify a handler type", 9},
		{"probe port", withSpec(oneContainer + "  readinessProbe:\n    tcpSocket: {port: 0}"), "spec.containers[0].readinessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive", 10},
		{"liveness success threshold", withSpec(oneContainer + "  livenessProbe:\n    exec: {command: [check]}\n    successThreshold: 2"), "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1", 11},
		{"probe on init container", withSpec(oneContainer + "initContainers:\n- name: init\n  image: b\n  livenessProbe:\n    exec: {command: [x]}"), "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always", 12},
		{"negative grace period", withSpec("terminationGracePeriodSeconds: -5\n" + oneContainer), "spec.terminationGracePeriodSeconds", 0},
		{"activeDeadlineSeconds", withSpec("activeDeadlineSeconds: 0\n" + oneContainer), "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive", 6},
		{"toleration", withSpec(oneContainer + "tolerations:\n- operator: Equal\n  value: x"), "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty", 10},
		{"runAsUser", withSpec(oneContainer + "  securityContext: {runAsUser: -1}"), "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive", 9},
		{"privilege escalation", withSpec(oneContainer + "  securityContext: {privileged: true, allowPrivilegeEscalation: false}"), "spec.containers[0].securityContext: Invalid value: cannot set `allowPrivilegeEscalation` to false and `privileged` to true", 9},
		{"seccomp localhost", withSpec("securityContext:\n  seccompProfile: {type: Localhost}\n" + oneContainer), "spec.securityContext.seccompProfile.localhostProfile: Required value", 7},
		{"ephemeral containers", withSpec(oneContainer + "ephemeralContainers:\n- name: debug\n  image: busybox"), "spec.ephemeralContainers: Forbidden: cannot be set on create", 9},
		{"hostname", withSpec("hostname: my_host\n" + oneContainer), `spec.hostname: Invalid value: "my_host"`, 6},
		{"nodeSelector", withSpec("nodeSelector: {a: b c}\n" + oneContainer), `spec.nodeSelector: Invalid value: "b c"`, 6},
		{"several errors joined", withSpec("restartPolicy: Sometimes\ncontainers:\n- name: app"), "spec.containers[0].image: Required value; spec.restartPolicy: Unsupported value", 8},
		{"deletion cost annotation", strings.Replace(withSpec(oneContainer), "  name: web\n", "  name: web\n  annotations:\n    controller.kubernetes.io/pod-deletion-cost: high\n", 1),
			"metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: must be a 32bit integer", 6},
		// Static pods may not use API objects.
		{"secret volume", withSpec(oneContainer + "volumes:\n- name: s\n  secret: {secretName: creds}"), "static pods may not reference secrets", 11},
		{"configmap env", withSpec(oneContainer + "  env:\n  - name: A\n    valueFrom: {configMapKeyRef: {name: cm, key: k}}"), "static pods may not reference configmaps", 11},
		{"service account", withSpec("serviceAccountName: builder\n" + oneContainer), "static pods may not reference serviceaccounts", 6},
		{"pvc", withSpec(oneContainer + "volumes:\n- name: p\n  persistentVolumeClaim: {claimName: data}"), "static pods may not reference persistentvolumeclaims", 11},
		{"projected token", withSpec("serviceAccountName: x\n" + oneContainer + "volumes:\n- name: t\n  projected:\n    sources:\n    - serviceAccountToken: {path: token}"), "static pods may not reference serviceaccounts", 6},
		{"projected token without account", withSpec(oneContainer + "volumes:\n- name: t\n  projected:\n    sources:\n    - serviceAccountToken: {path: token}"), "spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be specified when serviceAccountName is not set", 13},
		{"cluster trust bundle", withSpec(oneContainer + "volumes:\n- name: t\n  projected:\n    sources:\n    - clusterTrustBundle: {name: b, path: ca.crt}"), "static pods may not reference clustertrustbundles", 13},
		{"resource claims", withSpec(oneContainer + "resourceClaims:\n- name: gpu\n  resourceClaimName: gpu"), "static pods may not reference resourceclaims", 9},
		{"image pull secret", withSpec(oneContainer + "imagePullSecrets:\n- name: regcred"), "static pods may not reference secrets", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustFail(t, tt.data)
			if !strings.Contains(e.Msg, tt.want) {
				t.Errorf("Msg = %q\nwant it to contain %q", e.Msg, tt.want)
			}
			if tt.line != 0 && e.Line != tt.line {
				t.Errorf("Line = %d, want %d (Msg %q)", e.Line, tt.line, e.Msg)
			}
		})
	}
}

func TestValidManifestsPass(t *testing.T) {
	tests := map[string]string{
		"relaxed env names":   oneContainer + "  env:\n  - name: 1-my.var\n    value: x",
		"sidecar with probes": oneContainer + "initContainers:\n- name: proxy\n  image: envoy\n  restartPolicy: Always\n  readinessProbe:\n    tcpSocket: {port: 80}",
		"same containerPort":  oneContainer + "  ports:\n  - containerPort: 80\n  - containerPort: 80\n    protocol: UDP",
		"downward api env":    oneContainer + "  env:\n  - name: NODE\n    valueFrom: {fieldRef: {fieldPath: \"metadata.labels['app']\"}}",
		"hostNetwork":         "hostNetwork: true\n" + oneContainer + "  ports:\n  - containerPort: 10250",
		"privileged":          oneContainer + "  securityContext: {privileged: true}",
		"downwardAPI volume":  oneContainer + "volumes:\n- name: info\n  downwardAPI:\n    items:\n    - path: labels\n      fieldRef: {fieldPath: metadata.labels}",
		"hugepages":           oneContainer + "  resources:\n    limits: {hugepages-2Mi: 4Mi, memory: 1Gi}",
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) { mustDecode(t, withSpec(spec)) })
	}
}
