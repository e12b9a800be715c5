package monitoring

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	yamlv2 "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/podwatch/podwatch/pkg/metrics"
)

// metricsPort is the container port named name, which must be where the
// agent's --metrics-bind-address listens on the pod's IP: a loopback bind
// would serve the probes' kubelet and no Prometheus.
func metricsPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	var port *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].Name == name {
			port = &c.Ports[i]
		}
	}
	if port == nil {
		t.Fatalf("the podwatch container has no port named %q", name)
	}
	bind := metrics.DefaultBindAddress
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--metrics-bind-address="); ok {
			bind = v
		}
	}
	host, p, err := net.SplitHostPort(bind)
	if err != nil {
		t.Fatalf("--metrics-bind-address=%s: %v", bind, err)
	}
	if host != "" && !net.ParseIP(host).IsUnspecified() {
		t.Errorf("--metrics-bind-address=%s: only reachable on %s, not on the pod's IP", bind, host)
	}
	if p != strconv.Itoa(int(port.ContainerPort)) {
		t.Errorf("--metrics-bind-address=%s, but port %s is %d", bind, name, port.ContainerPort)
	}
	return port.ContainerPort
}

func TestPodMonitorScrapesTheDaemonSet(t *testing.T) {
	ds, c := daemonSet(t)
	var pm monitoringv1.PodMonitor
	decodeStrict(t, filepath.Join(prometheusDir, "podmonitor.yaml"), &pm)
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
		t.Errorf("podmonitor.yaml is %s %s", pm.APIVersion, pm.Kind)
	}
	// Without a namespaceSelector a PodMonitor selects pods of its own
	// namespace.
	if pm.Namespace != ds.Namespace || pm.Spec.NamespaceSelector.Any || len(pm.Spec.NamespaceSelector.MatchNames) > 0 {
		t.Errorf("PodMonitor in %q with %+v, want the DaemonSet's namespace %q alone", pm.Namespace, pm.Spec.NamespaceSelector, ds.Namespace)
	}
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Empty() || !sel.Matches(k8slabels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("PodMonitor selector %v does not select the DaemonSet's pods %v", sel, ds.Spec.Template.Labels)
	}
	// The operator names the job after this pod label.
	if got := ds.Spec.Template.Labels[pm.Spec.JobLabel]; got != podwatchJob {
		t.Errorf("jobLabel %q gives job %q, want %q as the rules expect", pm.Spec.JobLabel, got, podwatchJob)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("%d podMetricsEndpoints, want 1", len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil {
		t.Fatal("the endpoint names no port")
	}
	metricsPort(t, c, *ep.Port)
	if ep.Path != "/metrics" {
		t.Errorf("path %q, want /metrics", ep.Path)
	}
	// Its relabelings, run as Prometheus runs them on a discovered pod,
	// give the node label the runbooks use.
	var cfgs []*relabel.Config
	for _, rc := range ep.RelabelConfigs {
		cfg := relabel.DefaultRelabelConfig
		for _, l := range rc.SourceLabels {
			cfg.SourceLabels = append(cfg.SourceLabels, model.LabelName(l))
		}
		cfg.TargetLabel = rc.TargetLabel
		if rc.Regex != "" {
			cfg.Regex = relabel.MustNewRegexp(rc.Regex)
		}
		if rc.Replacement != nil {
			cfg.Replacement = *rc.Replacement
		}
		if rc.Action != "" {
			cfg.Action = relabel.Action(strings.ToLower(rc.Action))
		}
		cfgs = append(cfgs, &cfg)
	}
	got := relabelTarget(t, cfgs, "__address__", "127.0.0.1:10288", "__meta_kubernetes_pod_node_name", testNode)
	if got.Get("node") != testNode {
		t.Errorf("relabelled target %v: node = %q, want %q", got, got.Get("node"), testNode)
	}
}

// relabelTarget runs cfgs on a target with the given labels, as Prometheus
// does before a scrape; nil when they drop it.
func relabelTarget(t *testing.T, cfgs []*relabel.Config, kv ...string) *labels.Labels {
	t.Helper()
	for _, c := range cfgs {
		if err := c.Validate(model.UTF8Validation); err != nil {
			t.Fatalf("relabel config %+v: %v", c, err)
		}
	}
	lb := labels.NewBuilder(labels.FromStrings(kv...))
	if !relabel.ProcessBuilder(lb, cfgs...) {
		return nil
	}
	ls := lb.Labels()
	return &ls
}

func TestServiceSelectsTheDaemonSet(t *testing.T) {
	ds, c := daemonSet(t)
	var svc corev1.Service
	decodeStrict(t, filepath.Join(deployDir, "kubernetes", "30-service.yaml"), &svc)
	if svc.Namespace != ds.Namespace || svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service %s/%s clusterIP %q, want headless in %q", svc.Namespace, svc.Name, svc.Spec.ClusterIP, ds.Namespace)
	}
	if len(svc.Spec.Selector) == 0 || !k8slabels.SelectorFromSet(svc.Spec.Selector).Matches(k8slabels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("Service selector %v does not select the DaemonSet's pods %v", svc.Spec.Selector, ds.Spec.Template.Labels)
	}
	if len(svc.Spec.Ports) != 1 {
		t.Fatalf("%d Service ports, want 1", len(svc.Spec.Ports))
	}
	sp := svc.Spec.Ports[0]
	if want := metricsPort(t, c, sp.TargetPort.String()); sp.Port != want || sp.Name != "metrics" {
		t.Errorf("Service port %s %d, want metrics %d", sp.Name, sp.Port, want)
	}
}

// scrapeConfig is the part of a Prometheus config file read here; promtool
// check config checks the whole.
type scrapeConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
		RelabelConfigs []*relabel.Config `yaml:"relabel_configs"`
	} `yaml:"scrape_configs"`
}

func loadScrapeConfig(t *testing.T, bin, file string) scrapeConfig {
	t.Helper()
	runPromtool(t, bin, prometheusDir, "check", "config", file)
	data, err := os.ReadFile(filepath.Join(prometheusDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var sc scrapeConfig
	if err := yamlv2.Unmarshal(data, &sc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(sc.RuleFiles) != 1 || sc.RuleFiles[0] != rulesFile {
		t.Errorf("%s loads rules %v, want [%s]", file, sc.RuleFiles, rulesFile)
	}
	if len(sc.ScrapeConfigs) != 1 || sc.ScrapeConfigs[0].JobName != podwatchJob {
		t.Fatalf("%s: want one scrape config, job %q", file, podwatchJob)
	}
	return sc
}

// The systemd snippet scrapes the agent's port and names each target's
// node after its host.
func TestScrapeConfigForSystemd(t *testing.T) {
	sc := loadScrapeConfig(t, promtool(t), "scrape-systemd.yaml").ScrapeConfigs[0]
	n := 0
	for _, st := range sc.StaticConfigs {
		for _, target := range st.Targets {
			n++
			host, port, err := net.SplitHostPort(target)
			if err != nil || port != strconv.Itoa(metrics.DefaultPort) {
				t.Errorf("target %q: want HOST:%d (%v)", target, metrics.DefaultPort, err)
			}
			got := relabelTarget(t, sc.RelabelConfigs, "__address__", target, "job", podwatchJob)
			if got == nil || got.Get("node") != host {
				t.Errorf("target %q relabelled to %v, want node=%q", target, got, host)
			}
		}
	}
	if n == 0 {
		t.Error("no targets")
	}
}

// The Kubernetes snippet keeps the Service's metrics endpoints alone and
// names each target's node.
func TestScrapeConfigForKubernetes(t *testing.T) {
	sc := loadScrapeConfig(t, promtool(t), "scrape-kubernetes.yaml").ScrapeConfigs[0]
	var svc corev1.Service
	decodeStrict(t, filepath.Join(deployDir, "kubernetes", "30-service.yaml"), &svc)
	endpoint := func(service, port string) *labels.Labels {
		return relabelTarget(t, sc.RelabelConfigs, "__address__", "127.0.0.1:10288", "job", podwatchJob,
			"__meta_kubernetes_namespace", svc.Namespace, "__meta_kubernetes_service_name", service,
			"__meta_kubernetes_endpoint_port_name", port, "__meta_kubernetes_pod_node_name", testNode,
			"__meta_kubernetes_pod_name", "podwatch-x7k2p")
	}
	got := endpoint(svc.Name, svc.Spec.Ports[0].Name)
	if got == nil || got.Get("node") != testNode || got.Get("pod") != "podwatch-x7k2p" {
		t.Errorf("the Service's metrics endpoint relabelled to %v, want kept with node=%q", got, testNode)
	}
	if got := endpoint("kube-dns", "metrics"); got != nil {
		t.Errorf("another Service's endpoint kept: %v", got)
	}
}
