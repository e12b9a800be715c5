package main

import "fmt"

const (
	namespace = "kube-system"
	node      = "userlatency"
)

// manifestYAML is a valid static pod manifest of one container.
func manifestYAML(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {app: %s}
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    command: [/pause]
    resources: {requests: {cpu: 10m, memory: 16Mi}}
`, name, namespace, name)
}
