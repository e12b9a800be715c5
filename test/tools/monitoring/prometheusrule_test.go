package monitoring

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite deploy/prometheus/prometheusrule.yaml from podwatch-rules.yaml")

const prometheusRuleFile = "prometheusrule.yaml"

// prometheusRule is podwatch-rules.yaml's groups as a PrometheusRule of the
// DaemonSet's namespace, the file's bytes.
func prometheusRule(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(prometheusDir, rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []any `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	ds, _ := daemonSet(t)
	out, err := sigsyaml.Marshal(map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name": "podwatch", "namespace": ds.Namespace,
			"labels": map[string]string{"app.kubernetes.io/name": "podwatch"},
		},
		"spec": map[string]any{"groups": rules.Groups},
	})
	if err != nil {
		t.Fatal(err)
	}
	header := "# Generated from podwatch-rules.yaml for the Prometheus Operator; do not edit.\n" +
		"# cd test/tools/monitoring && go test -run TestPrometheusRule -update\n" +
		"# rewrites it. If your Prometheus selects rules by label (ruleSelector),\n" +
		"# add that label after applying: kubectl label prometheusrule ...\n"
	return append([]byte(header), out...)
}

// prometheusrule.yaml holds exactly the rules of podwatch-rules.yaml, and
// is a PrometheusRule the operator's types accept.
func TestPrometheusRuleIsTheRulesFile(t *testing.T) {
	want := prometheusRule(t)
	path := filepath.Join(prometheusDir, prometheusRuleFile)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not podwatch-rules.yaml's rules; rerun with -update", prometheusRuleFile)
	}
	var pr monitoringv1.PrometheusRule
	decodeStrict(t, path, &pr)
	n := 0
	for _, g := range pr.Spec.Groups {
		n += len(g.Rules)
	}
	if pr.Kind != "PrometheusRule" || n != len(loadRules(t)) {
		t.Errorf("%s: %s with %d rules, want a PrometheusRule with %d", prometheusRuleFile, pr.Kind, n, len(loadRules(t)))
	}
}
