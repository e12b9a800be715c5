// Package integration tests podwatch's Kubernetes API sink against a real
// kube-apiserver and etcd (see ../apiserver): what `kubectl describe` finds,
// counts across outages and deletions, and the deploy/kubernetes RBAC.
package integration
