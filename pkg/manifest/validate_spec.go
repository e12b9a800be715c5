package manifest

import (
	"fmt"
	"math"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSpec follows ValidatePodSpec. Volumes come first because
// containers are checked against the volumes that validated.
func validateSpec(spec *v1.PodSpec, meta *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(path.Child("terminationGracePeriodSeconds"), ""))
	}
	vols, verrs := validateVolumes(spec.Volumes, meta, path.Child("volumes"))
	errs = append(errs, verrs...)
	claims := map[string]bool{}
	for _, c := range spec.ResourceClaims {
		claims[c.Name] = true
	}
	ctx := &containerContext{spec: spec, volumes: vols, claims: claims}
	errs = append(errs, ctx.validateContainers(path.Child("containers"))...)
	errs = append(errs, ctx.validateInitContainers(path.Child("initContainers"))...)
	if spec.Resources != nil {
		errs = append(errs, validatePodResources(spec, path.Child("resources"))...)
	}
	errs = append(errs, validateHostNetworkPorts(spec, path)...)
	errs = append(errs, validateEnum(path.Child("restartPolicy"), spec.RestartPolicy,
		v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever)...)
	errs = append(errs, validateEnum(path.Child("dnsPolicy"), spec.DNSPolicy,
		v1.DNSClusterFirstWithHostNet, v1.DNSClusterFirst, v1.DNSDefault, v1.DNSNone)...)
	errs = append(errs, metavalidation.ValidateLabels(spec.NodeSelector, path.Child("nodeSelector"))...)
	errs = append(errs, validatePodSecurityContext(spec, path.Child("securityContext"))...)
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace && spec.HostPID {
		errs = append(errs, field.Invalid(path.Child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	errs = append(errs, validateDNSConfig(spec, path.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		errs = append(errs, qualifiedName(path.Child("readinessGates").Index(i).Child("conditionType"), string(g.ConditionType))...)
	}
	errs = append(errs, validateHostUsers(spec, path)...)
	if spec.ServiceAccountName != "" {
		errs = append(errs, dnsSubdomain(path.Child("serviceAccountName"), spec.ServiceAccountName)...)
	}
	if spec.NodeName != "" {
		// The node name is the kubelet's own: a node name that is not a DNS
		// subdomain makes every static pod on that node invalid.
		errs = append(errs, dnsSubdomain(path.Child("nodeName"), spec.NodeName)...)
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Hostname != "" {
		errs = append(errs, dnsLabel(path.Child("hostname"), spec.Hostname)...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dnsLabel(path.Child("subdomain"), spec.Subdomain)...)
	}
	errs = append(errs, validateTolerations(spec.Tolerations, path.Child("tolerations"))...)
	for i, a := range spec.HostAliases {
		p := path.Child("hostAliases").Index(i)
		errs = append(errs, validation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)...)
		for j, h := range a.Hostnames {
			errs = append(errs, dnsSubdomain(p.Child("hostnames").Index(j), h)...)
		}
	}
	if spec.PriorityClassName != "" {
		errs = append(errs, dnsSubdomain(path.Child("priorityClassName"), spec.PriorityClassName)...)
	}
	if spec.RuntimeClassName != nil {
		errs = append(errs, dnsSubdomain(path.Child("runtimeClassName"), *spec.RuntimeClassName)...)
	}
	if spec.PreemptionPolicy != nil {
		errs = append(errs, validateEnum(path.Child("preemptionPolicy"), *spec.PreemptionPolicy, v1.PreemptLowerPriority, v1.PreemptNever)...)
	}
	if spec.Overhead != nil {
		errs = append(errs, validateResourceRequirements(&v1.ResourceRequirements{Limits: spec.Overhead}, nil, path.Child("overhead"))...)
	}
	if spec.OS != nil {
		if spec.OS.Name == "" {
			errs = append(errs, field.Required(path.Child("os", "name"), ""))
		} else if spec.OS.Name != v1.Linux && spec.OS.Name != v1.Windows {
			errs = append(errs, field.NotSupported(path.Child("os"), spec.OS.Name, []v1.OSName{v1.Linux, v1.Windows}))
		}
	}
	return errs
}

// validateEnum reports an empty value as Required and an unknown one as
// NotSupported, listing the accepted values.
func validateEnum[T ~string](path *field.Path, v T, allowed ...T) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, v, allowed)}
}

func dnsSubdomain(path *field.Path, v string) field.ErrorList {
	return invalidAll(path, v, validation.IsDNS1123Subdomain(v))
}

func dnsLabel(path *field.Path, v string) field.ErrorList {
	return invalidAll(path, v, validation.IsDNS1123Label(v))
}

func qualifiedName(path *field.Path, v string) field.ErrorList {
	return invalidAll(path, v, validation.IsQualifiedName(v))
}

// invalidAll turns a validator's messages about v into field errors.
func invalidAll(path *field.Path, v string, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	return errs
}

// validateHostNetworkPorts: with the host's network a container can only
// listen on the host port it declares. The kubelet does not mark static pods
// as pods here, so an unset host port passes (it was defaulted anyway).
func validateHostNetworkPorts(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	for i, c := range spec.Containers {
		for j, p := range c.Ports {
			if p.HostPort != 0 && p.HostPort != p.ContainerPort {
				errs = append(errs, field.Invalid(path.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"),
					p.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return errs
}

// validateHostUsers: user namespaces cannot be combined with host namespaces
// (UserNamespacesHostNetworkSupport is off by default in v1.37).
func validateHostUsers(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var errs field.ErrorList
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(path.Child("hostNetwork"), "when `hostUsers` is false"))
	}
	if spec.HostPID {
		errs = append(errs, field.Forbidden(path.Child("HostPID"), "when `hostUsers` is false"))
	}
	if spec.HostIPC {
		errs = append(errs, field.Forbidden(path.Child("HostIPC"), "when `hostUsers` is false"))
	}
	visitContainers(spec, path, func(c *v1.Container, p *field.Path) {
		if len(c.VolumeDevices) > 0 {
			errs = append(errs, field.Forbidden(p.Child("volumeDevices"), "when `hostUsers` is false"))
		}
	})
	return errs
}

func validatePodSecurityContext(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		errs = append(errs, groupID(path.Child("fsGroup"), *sc.FSGroup)...)
	}
	if sc.RunAsUser != nil {
		errs = append(errs, userID(path.Child("runAsUser"), *sc.RunAsUser)...)
	}
	if sc.RunAsGroup != nil {
		errs = append(errs, groupID(path.Child("runAsGroup"), *sc.RunAsGroup)...)
	}
	for i, g := range sc.SupplementalGroups {
		errs = append(errs, groupID(path.Child("supplementalGroups").Index(i), g)...)
	}
	seen := map[string]bool{}
	for i, s := range sc.Sysctls {
		p := path.Child("sysctls").Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p, ""))
		case seen[s.Name]:
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		seen[s.Name] = true
	}
	if sc.FSGroupChangePolicy != nil {
		errs = append(errs, validateEnum(path.Child("fsGroupChangePolicy"), *sc.FSGroupChangePolicy, v1.FSGroupChangeOnRootMismatch, v1.FSGroupChangeAlways)...)
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, path.Child("seccompProfile"))...)
	if sc.SupplementalGroupsPolicy != nil {
		errs = append(errs, validateEnum(path.Child("supplementalGroupsPolicy"), *sc.SupplementalGroupsPolicy, v1.SupplementalGroupsPolicyMerge, v1.SupplementalGroupsPolicyStrict)...)
	}
	return errs
}

func userID(path *field.Path, id int64) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidUserID(id) {
		errs = append(errs, field.Invalid(path, id, msg))
	}
	return errs
}

func groupID(path *field.Path, id int64) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidGroupID(id) {
		errs = append(errs, field.Invalid(path, id, msg))
	}
	return errs
}

func validateSeccompProfile(sp *v1.SeccompProfile, path *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	errs := validateEnum(path.Child("type"), sp.Type, v1.SeccompProfileTypeLocalhost, v1.SeccompProfileTypeRuntimeDefault, v1.SeccompProfileTypeUnconfined)
	if sp.Type == v1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			errs = append(errs, field.Required(path.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, validateLocalDescendingPath(*sp.LocalhostProfile, path.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(path.Child("localhostProfile"), *sp.LocalhostProfile, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

func validateDNSConfig(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	cfg := spec.DNSConfig
	if spec.DNSPolicy == v1.DNSNone {
		if cfg == nil {
			return field.ErrorList{field.Required(path, "must provide `dnsConfig` when `dnsPolicy` is None")}
		}
		if len(cfg.Nameservers) == 0 {
			return field.ErrorList{field.Required(path.Child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None")}
		}
	}
	if cfg == nil {
		return nil
	}
	var errs field.ErrorList
	if len(cfg.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(path.Child("nameservers"), cfg.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range cfg.Nameservers {
		errs = append(errs, validation.IsValidIPForLegacyField(path.Child("nameservers").Index(i), ns, true, nil)...)
	}
	if len(cfg.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(path.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(cfg.Searches, " ")) > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(path.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range cfg.Searches {
		if s == "." {
			continue
		}
		s = strings.TrimSuffix(s, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(s) {
			errs = append(errs, field.Invalid(path.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range cfg.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(path.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

func validateTolerations(ts []v1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != v1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != v1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case v1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case v1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []v1.TolerationOperator{v1.TolerationOpEqual, v1.TolerationOpExists}))
		}
		if t.Effect != "" {
			errs = append(errs, validateEnum(p.Child("effect"), t.Effect, v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute)...)
		}
	}
	return errs
}

func sortedKeys[M ~map[K]V, K ~string, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
