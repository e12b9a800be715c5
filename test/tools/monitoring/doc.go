// Package monitoring tests what deploy/prometheus gives an operator: the
// alerting rules, their unit tests, the scrape configs and the PodMonitor,
// against a real podwatch agent and a real promtool.
//
// It is a module of its own: promtool is built from
// github.com/prometheus/prometheus, whose dependencies (newer gRPC and
// OpenTelemetry among them) would otherwise move those of test/tools, which
// builds kube-apiserver and the kubelet from k8s.io/kubernetes.
//
// The tests start the agent in process (pkg/agent) on a real manifest
// folder, scrape its /metrics over HTTP and hold the rules to it: every
// metric and label a rule or a unit test uses must be in the scrape, so a
// renamed metric fails here, and the scrape itself, turned into promtool
// input, must fire exactly the alerts its folder calls for.
package monitoring
