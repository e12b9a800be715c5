package monitoring

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/podwatch/podwatch/internal/testutil"
	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/follow"
)

const (
	rulesFile     = "podwatch-rules.yaml"
	rulesTestFile = "podwatch-rules.test.yaml"
	// podwatchJob is the job every scrape config here gives the agents, and
	// the one the rules' up{} selectors name.
	podwatchJob = "podwatch"
)

// targetLabels are what Prometheus adds to every series it scrapes: job and
// instance, node from the relabelling of every scrape config here, and what
// the Prometheus Operator adds for a PodMonitor. Rules may use them; an
// agent's /metrics has none of them.
func targetLabels() map[string]bool {
	return map[string]bool{"job": true, "instance": true, "node": true, "namespace": true,
		"pod": true, "container": true, "endpoint": true}
}

// series is one sample of a scrape, its name among its labels.
type series struct {
	labels map[string]string
	value  float64
}

func (s series) name() string { return s.labels[model.MetricNameLabel] }

// podwatchSeries flattens podwatch's own families of a scrape into series,
// as Prometheus stores them (a histogram as _bucket, _sum and _count).
func podwatchSeries(mfs map[string]*dto.MetricFamily) []series {
	var out []series
	add := func(name string, m *dto.Metric, v float64, extra ...string) {
		ls := map[string]string{model.MetricNameLabel: name}
		for _, l := range m.GetLabel() {
			ls[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(extra); i += 2 {
			ls[extra[i]] = extra[i+1]
		}
		out = append(out, series{ls, v})
	}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "podwatch_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				for _, b := range h.GetBucket() {
					add(name+"_bucket", m, float64(b.GetCumulativeCount()), "le", strconv.FormatFloat(b.GetUpperBound(), 'f', -1, 64))
				}
				add(name+"_bucket", m, float64(h.GetSampleCount()), "le", "+Inf")
				add(name+"_sum", m, h.GetSampleSum())
				add(name+"_count", m, float64(h.GetSampleCount()))
				continue
			}
			add(name, m, sampleValue(m))
		}
	}
	sort.Slice(out, func(i, j int) bool { return selector(out[i].labels) < selector(out[j].labels) })
	return out
}

// exported indexes series: name, then label, then the values seen.
type exported map[string]map[string]map[string]bool

func index(ss []series) exported {
	e := exported{}
	for _, s := range ss {
		byLabel := e[s.name()]
		if byLabel == nil {
			byLabel = map[string]map[string]bool{}
			e[s.name()] = byLabel
		}
		for k, v := range s.labels {
			if k == model.MetricNameLabel {
				continue
			}
			if byLabel[k] == nil {
				byLabel[k] = map[string]bool{}
			}
			byLabel[k][v] = true
		}
	}
	return e
}

// selector writes labels as PromQL does, name first, the others sorted.
func selector(ls map[string]string) string {
	var keys []string
	for k := range ls {
		if k != model.MetricNameLabel {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(ls[k])
	}
	return ls[model.MetricNameLabel] + "{" + strings.Join(parts, ", ") + "}"
}

func loadRules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.ParseFile(filepath.Join(prometheusDir, rulesFile), false, model.UTF8Validation,
		parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("%s: %v", rulesFile, errs)
	}
	var rules []rulefmt.Rule
	for _, g := range groups.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return rules
}

// selectors are the vector selectors of a PromQL expression, range
// selectors' included.
func selectors(t *testing.T, expr string) []*parser.VectorSelector {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%q: %v", expr, err)
	}
	var out []*parser.VectorSelector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

func selectorName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// problemFolder makes the agent report what the manifest alerts are for:
// a file the kubelet rejects, and a leftover .bak defining the pod web.yaml
// defines.
func problemFolder() agentFolder {
	web := pod("web", "nginx:1.29")
	return agentFolder{
		"web.yaml":     web,
		"web.yaml.bak": web,
		"bad.yaml":     "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n",
	}
}

// scrapeProblems runs the agent on problemFolder with a state dir it
// cannot use, and returns its scrape once it reports all three.
func scrapeProblems(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	notADir := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, problemFolder(), notADir)
	return a.scrapeWhen(
		sampleWant{"podwatch_manifests", map[string]string{"state": "valid"}, 1},
		sampleWant{"podwatch_manifests", map[string]string{"state": "invalid"}, 1},
		sampleWant{"podwatch_manifests", map[string]string{"state": "duplicate"}, 1},
		sampleWant{"podwatch_state_persisted", nil, 0},
		sampleWant{"podwatch_watch_up", nil, 1},
	)
}

// scrapeHealthy runs the agent on one valid manifest with a usable state
// dir, and returns its scrape once it has published the pod.
func scrapeHealthy(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	return startAgent(t, agentFolder{"web.yaml": pod("web", "nginx:1.29")}, "").scrapeWhen(
		sampleWant{"podwatch_manifests", map[string]string{"state": "valid"}, 1},
		sampleWant{"podwatch_watch_up", nil, 1},
		sampleWant{"podwatch_state_persisted", nil, 1},
		sampleWant{"podwatch_static_pod_changes_total", map[string]string{"op": "ADD"}, 1},
	)
}

// scrapeNotStarted runs the agent following its one pod through a
// container runtime (the CRI fake) that never runs it, with a short
// --follow-deadline, and returns its scrape once the pod is overdue.
func scrapeNotStarted(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	_, endpoint := testutil.ServeFakeCRI(t)
	a := startAgent(t, agentFolder{"web.yaml": pod("web", "nginx:1.29")}, "", func(o *agent.Options) {
		o.RuntimeEndpoint = endpoint
		o.Follow = follow.Options{Deadline: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond, IdlePollInterval: time.Second}
	})
	return a.scrapeWhen(
		sampleWant{"podwatch_follow_overdue_pods", map[string]string{"reason": "StaticPodNotStarted", "cause": "no_sandbox"}, 1},
		sampleWant{"podwatch_follow_outcomes_total", map[string]string{"reason": "StaticPodNotStarted"}, 1},
	)
}

// exportedByAgents is what the agents export: the healthy one has the
// store sink, which the one without a state dir lacks, and only the one
// that follows its pod to a runtime has the follow metrics.
func exportedByAgents(t *testing.T) exported {
	t.Helper()
	ss := append(podwatchSeries(scrapeHealthy(t)), podwatchSeries(scrapeProblems(t))...)
	return index(append(ss, podwatchSeries(scrapeNotStarted(t))...))
}

// Every metric a rule selects is one the agent exports, with the labels
// and label values the rule matches on, and every label an annotation
// prints is one the selected series carry: a metric or label renamed in
// pkg/metrics fails here, not silently in production.
func TestRulesSelectWhatTheAgentExports(t *testing.T) {
	got := exportedByAgents(t)
	labelRef := regexp.MustCompile(`\$labels\.([A-Za-z_][A-Za-z0-9_]*)`)
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			t.Errorf("%s: recording rule %q: this file holds alerts only", rulesFile, r.Record)
			continue
		}
		// The labels the alert's series carry: the targets' own, and those
		// of every podwatch metric it selects (absent() carries only the
		// equality matchers of its selector, job here).
		carried := targetLabels()
		for _, vs := range selectors(t, r.Expr) {
			name := selectorName(vs)
			if name == "up" {
				for _, m := range vs.LabelMatchers {
					if m.Name == "job" && (m.Type != labels.MatchEqual || m.Value != podwatchJob) {
						t.Errorf("%s: %s selects up{%s}, want job=%q, the scrape configs' job", r.Alert, r.Expr, m, podwatchJob)
					}
				}
				continue
			}
			if !strings.HasPrefix(name, "podwatch_") {
				t.Errorf("%s: %s selects %q, which podwatch does not export", r.Alert, r.Expr, name)
				continue
			}
			byLabel, ok := got[name]
			if !ok {
				t.Errorf("%s: %s selects %s, which the agent's /metrics does not have", r.Alert, r.Expr, name)
				continue
			}
			for l := range byLabel {
				carried[l] = true
			}
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel || targetLabels()[m.Name] {
					continue
				}
				values, ok := byLabel[m.Name]
				switch {
				case !ok:
					t.Errorf("%s: %s matches label %q, which %s does not have", r.Alert, r.Expr, m.Name, name)
				case m.Type == labels.MatchEqual && !values[m.Value]:
					t.Errorf("%s: %s matches %s, but %s has %s only", r.Alert, r.Expr, m, name, slices.Sorted(mapKeys(values)))
				}
			}
		}
		for k, text := range r.Annotations {
			for _, ref := range labelRef.FindAllStringSubmatch(text, -1) {
				if !carried[ref[1]] {
					t.Errorf("%s: annotation %s prints $labels.%s, which its series do not carry", r.Alert, k, ref[1])
				}
			}
		}
		if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: wants a severity label and summary and description annotations", r.Alert)
		}
	}
}

// unitTests is the part of a promtool unit test file read here.
type unitTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name        string `yaml:"name"`
		InputSeries []struct {
			Series string `yaml:"series"`
		} `yaml:"input_series"`
		AlertRuleTests []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// The unit tests feed the rules the series the agent exports (a renamed
// metric or label fails here), and cover every alert both firing and not
// firing.
func TestUnitTestsUseWhatTheAgentExports(t *testing.T) {
	got := exportedByAgents(t)
	data, err := os.ReadFile(filepath.Join(prometheusDir, rulesTestFile))
	if err != nil {
		t.Fatal(err)
	}
	var ut unitTests
	if err := yaml.Unmarshal(data, &ut); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	if !slices.Equal(ut.RuleFiles, []string{rulesFile}) {
		t.Errorf("%s tests %v, want [%s]", rulesTestFile, ut.RuleFiles, rulesFile)
	}
	p := parser.NewParser(parser.Options{})
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range ut.Tests {
		for _, in := range tc.InputSeries {
			ls, err := p.ParseMetric(in.Series)
			if err != nil {
				t.Errorf("%s: %q: %v", tc.Name, in.Series, err)
				continue
			}
			name := ls.Get(model.MetricNameLabel)
			if name == "up" {
				continue // Prometheus' own, for the agent alerts
			}
			byLabel, ok := got[name]
			if !ok {
				t.Errorf("%s: input series %s: the agent's /metrics has no %s", tc.Name, in.Series, name)
				continue
			}
			ls.Range(func(l labels.Label) {
				if l.Name == model.MetricNameLabel || targetLabels()[l.Name] {
					return
				}
				values, ok := byLabel[l.Name]
				switch {
				case !ok:
					t.Errorf("%s: input series %s: %s has no label %q", tc.Name, in.Series, name, l.Name)
				case !values[l.Value] && !openValue(l):
					t.Errorf("%s: input series %s: %s has %s=%v only", tc.Name, in.Series, name, l.Name, slices.Sorted(mapKeys(values)))
				}
			})
		}
		for _, a := range tc.AlertRuleTests {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, r := range loadRules(t) {
		if !fires[r.Alert] || !quiet[r.Alert] {
			t.Errorf("%s: %s has a firing case: %v, a quiet case: %v; want both", rulesTestFile, r.Alert, fires[r.Alert], quiet[r.Alert])
		}
	}
}

// openValue reports label values a test agent cannot show: the sink of the
// Kubernetes API (the agent here has no cluster) and the failure codes,
// which are the API's HTTP statuses.
func openValue(l labels.Label) bool {
	return (l.Name == "sink" && l.Value == "api") || l.Name == "code"
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestPromtoolChecksAndTestsTheRules(t *testing.T) {
	bin := promtool(t)
	runPromtool(t, bin, prometheusDir, "check", "rules", rulesFile)
	out := runPromtool(t, bin, prometheusDir, "test", "rules", rulesTestFile)
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules said:\n%s", out)
	}
}

// firing is an alert promtool must find firing, with its labels (alertname
// and severity included).
type firing map[string]string

// The rules on what the agent really exports: a healthy agent's scrape
// fires nothing, the scrape of an agent with an invalid manifest, a
// duplicate pod and an unusable state dir fires exactly those alerts, and
// that of an agent whose followed pod never runs fires only
// PodwatchStaticPodNotStarted.
// Each scrape is held for 20 minutes of promtool's time, longer than any
// rule's for:, with up at 1.
func TestRulesOnScrapedSeries(t *testing.T) {
	healthy := scrapeHealthy(t)
	target := map[string]string{"job": podwatchJob, "instance": testNode + ":10288", "node": testNode}
	alert := func(name string, extra ...string) firing {
		f := firing{"alertname": name, "alertstate": "firing", "severity": "warning"}
		for k, v := range target {
			f[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			f[extra[i]] = extra[i+1]
		}
		return f
	}
	file := scrapeUnitTest(t, target, []scrapeCase{
		{"a healthy agent", podwatchSeries(healthy), nil},
		{"an invalid manifest, a duplicate pod and no state dir", podwatchSeries(scrapeProblems(t)), []firing{
			alert("PodwatchInvalidManifest", "state", "invalid"),
			alert("PodwatchDuplicatePod", "state", "duplicate"),
			alert("PodwatchStateNotPersisted"),
		}},
		{"a followed pod the runtime never runs", podwatchSeries(scrapeNotStarted(t)), []firing{
			alert("PodwatchStaticPodNotStarted", "reason", "StaticPodNotStarted"),
		}},
	})
	out, err := promtoolOutput(promtool(t), filepath.Dir(file), "test", "rules", filepath.Base(file))
	if err != nil {
		data, _ := os.ReadFile(file)
		t.Fatalf("promtool test rules on the scraped series: %v\n%s\ninput (%d bytes):\n%.4000s", err, out, len(data), data)
	}
}

type scrapeCase struct {
	name   string
	series []series
	want   []firing
}

// scrapeUnitTest writes a promtool unit test file in a temporary folder:
// per case, the series held at their scraped values with target's labels,
// up at 1, and the firing alerts expected at the end. It returns its path.
func scrapeUnitTest(t *testing.T, target map[string]string, cases []scrapeCase) string {
	t.Helper()
	const held, evalAt = 20, "20m" // samples a minute apart: 0m to 20m
	rules, err := filepath.Abs(filepath.Join(prometheusDir, rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	type inputSeries struct {
		Series string `json:"series"`
		Values string `json:"values"`
	}
	type sample struct {
		Labels string  `json:"labels"`
		Value  float64 `json:"value"`
	}
	type exprTest struct {
		Expr       string   `json:"expr"`
		EvalTime   string   `json:"eval_time"`
		ExpSamples []sample `json:"exp_samples"`
	}
	type test struct {
		Name      string        `json:"name"`
		Interval  string        `json:"interval"`
		Input     []inputSeries `json:"input_series"`
		ExprTests []exprTest    `json:"promql_expr_test"`
	}
	var tests []test
	for _, c := range cases {
		if len(c.series) == 0 {
			t.Fatalf("%s: no podwatch series scraped", c.name)
		}
		tc := test{Name: c.name, Interval: "1m"}
		hold := func(ls map[string]string, v float64) {
			all := map[string]string{}
			for k, v := range ls {
				all[k] = v
			}
			for k, v := range target {
				all[k] = v
			}
			tc.Input = append(tc.Input, inputSeries{selector(all), fmt.Sprintf("%s+0x%d", strconv.FormatFloat(v, 'f', -1, 64), held)})
		}
		for _, s := range c.series {
			hold(s.labels, s.value)
		}
		hold(map[string]string{model.MetricNameLabel: "up"}, 1)
		want := []sample{}
		for _, f := range c.want {
			ls := map[string]string{model.MetricNameLabel: "ALERTS"}
			for k, v := range f {
				ls[k] = v
			}
			want = append(want, sample{selector(ls), 1})
		}
		tc.ExprTests = []exprTest{{Expr: `ALERTS{alertstate="firing"}`, EvalTime: evalAt, ExpSamples: want}}
		tests = append(tests, tc)
	}
	// JSON is YAML, which promtool reads.
	data, err := json.MarshalIndent(map[string]any{
		"rule_files": []string{rules}, "evaluation_interval": "1m", "tests": tests,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "scraped.test.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
