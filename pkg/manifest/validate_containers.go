package manifest

import (
	"fmt"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// containerContext carries what every container is checked against.
type containerContext struct {
	spec    *v1.PodSpec
	volumes map[string]v1.VolumeSource // only the volumes that validated
	claims  map[string]bool
}

func (cc *containerContext) validateContainers(path *field.Path) field.ErrorList {
	cs := cc.spec.Containers
	if len(cs) == 0 {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range cs {
		c, p := &cs[i], path.Index(i)
		errs = append(errs, cc.validateCommon(c, p)...)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		names[c.Name] = true
		if c.Lifecycle != nil {
			errs = append(errs, cc.validateLifecycle(c.Lifecycle, p.Child("lifecycle"))...)
		}
		errs = append(errs, cc.validateProbes(c, p)...)
		errs = append(errs, validateContainerRestartPolicy(c, p)...)
	}
	return append(errs, hostPortConflicts(cs, path)...)
}

// validateInitContainers: names must not collide with regular containers;
// probes and lifecycle hooks only make sense for sidecars (restartPolicy
// Always); host ports are checked per container since they run in turn.
func (cc *containerContext) validateInitContainers(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for _, c := range cc.spec.Containers {
		names[c.Name] = true
	}
	for i := range cc.spec.InitContainers {
		c, p := &cc.spec.InitContainers[i], path.Index(i)
		errs = append(errs, cc.validateCommon(c, p)...)
		sidecar := false
		if c.RestartPolicy != nil {
			sidecar = *c.RestartPolicy == v1.ContainerRestartPolicyAlways
			if !sidecar {
				errs = append(errs, validateContainerRestartPolicy(c, p)...)
			}
		} else if len(c.RestartPolicyRules) > 0 {
			errs = append(errs, field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
		}
		if names[c.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		} else if c.Name != "" {
			names[c.Name] = true
		}
		errs = append(errs, hostPortConflicts([]v1.Container{*c}, path)...)
		if sidecar {
			if c.Lifecycle != nil {
				errs = append(errs, cc.validateLifecycle(c.Lifecycle, p.Child("lifecycle"))...)
			}
			errs = append(errs, cc.validateProbes(c, p)...)
			continue
		}
		const why = "may not be set for init containers without restartPolicy=Always"
		if c.Lifecycle != nil {
			errs = append(errs, field.Forbidden(p.Child("lifecycle"), why))
		}
		if c.LivenessProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("livenessProbe"), why))
		}
		if c.ReadinessProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("readinessProbe"), why))
		}
		if c.StartupProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("startupProbe"), why))
		}
		for j, rp := range c.ResizePolicy {
			if rp.RestartPolicy == v1.RestartContainer {
				errs = append(errs, field.Invalid(p.Child("resizePolicy").Index(j).Child("restartPolicy"), rp.RestartPolicy,
					"must not be set to 'RestartContainer' for non-sidecar initContainers"))
			}
		}
	}
	return errs
}

func validateContainerRestartPolicy(c *v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.RestartPolicy == nil {
		if len(c.RestartPolicyRules) > 0 {
			errs = append(errs, field.Required(path.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
		}
		return errs
	}
	errs = append(errs, validateEnum(path.Child("restartPolicy"), *c.RestartPolicy,
		v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure)...)
	if len(c.RestartPolicyRules) > 20 {
		errs = append(errs, field.TooMany(path.Child("restartPolicyRules"), len(c.RestartPolicyRules), 20))
	}
	for i, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			errs = append(errs, field.Required(path.Child("restartPolicyRules").Index(i).Child("exitCodes"), "must be specified"))
		}
	}
	return errs
}

// validateCommon holds the checks every kind of container gets.
func (cc *containerContext) validateCommon(c *v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, dnsLabel(path.Child("name"), c.Name)...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	}
	errs = append(errs, validateEnum(path.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
		v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError)...)
	errs = append(errs, validatePorts(c.Ports, path.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, path.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, path.Child("envFrom"))...)
	errs = append(errs, cc.validateMounts(c, path.Child("volumeMounts"))...)
	errs = append(errs, cc.validateDevices(c, path.Child("volumeDevices"))...)
	errs = append(errs, validateEnum(path.Child("imagePullPolicy"), c.ImagePullPolicy, v1.PullAlways, v1.PullIfNotPresent, v1.PullNever)...)
	errs = append(errs, validateResourceRequirements(&c.Resources, cc.claims, path.Child("resources"))...)
	errs = append(errs, validateResizePolicy(c.ResizePolicy, cc.spec.RestartPolicy, path.Child("resizePolicy"))...)
	errs = append(errs, validateSecurityContext(c.SecurityContext, cc.spec, path.Child("securityContext"))...)
	return errs
}

var supportedProtocols = []v1.Protocol{v1.ProtocolSCTP, v1.ProtocolTCP, v1.ProtocolUDP}

func validatePorts(ports []v1.ContainerPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, p := range ports {
		ip := path.Index(i)
		if p.Name != "" {
			if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
				for _, m := range msgs {
					errs = append(errs, field.Invalid(ip.Child("name"), p.Name, m))
				}
			} else if names[p.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), p.Name))
			} else {
				names[p.Name] = true
			}
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, m := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), p.ContainerPort, m))
			}
		}
		if p.HostPort != 0 {
			for _, m := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), p.HostPort, m))
			}
		}
		errs = append(errs, validateEnum(ip.Child("protocol"), p.Protocol, supportedProtocols...)...)
	}
	return errs
}

// hostPortConflicts: two ports may not claim the same host port, protocol
// and host IP. Container ports alone may repeat, as in the kubelet.
func hostPortConflicts(cs []v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range cs {
		for j, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", p.Protocol, p.HostIP, p.HostPort)
			if seen[key] {
				errs = append(errs, field.Duplicate(path.Index(i).Child("ports").Index(j).Child("hostPort"), key))
			}
			seen[key] = true
		}
	}
	return errs
}

// validateEnv checks names only. RelaxedEnvironmentVariableValidation is GA,
// so any printable ASCII but "=" is a valid name. Values are never quoted.
func validateEnv(env []v1.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		ip := path.Index(i)
		if e.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, m := range validation.IsRelaxedEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), e.Name, m))
			}
		}
		errs = append(errs, validateEnvValueFrom(e, ip.Child("valueFrom"))...)
	}
	return errs
}

func validateEnvValueFrom(e v1.EnvVar, path *field.Path) field.ErrorList {
	vf := e.ValueFrom
	if vf == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	if vf.FieldRef != nil {
		n++
		errs = append(errs, validateFieldRef(vf.FieldRef, path.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		errs = append(errs, validateResourceFieldRef(vf.ResourceFieldRef, path.Child("resourceFieldRef"))...)
	}
	if r := vf.ConfigMapKeyRef; r != nil {
		n++
		errs = append(errs, validateKeyRef(r.Name, r.Key, path.Child("configMapKeyRef"))...)
	}
	if r := vf.SecretKeyRef; r != nil {
		n++
		errs = append(errs, validateKeyRef(r.Name, r.Key, path.Child("secretKeyRef"))...)
	}
	if r := vf.FileKeyRef; r != nil {
		n++
		if r.VolumeName == "" {
			errs = append(errs, field.Required(path.Child("fileKeyRef", "volumeName"), ""))
		}
		if r.Path == "" {
			errs = append(errs, field.Required(path.Child("fileKeyRef", "path"), ""))
		}
		if r.Key == "" {
			errs = append(errs, field.Required(path.Child("fileKeyRef", "key"), ""))
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case e.Value != "":
		errs = append(errs, field.Invalid(path, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(path, "", "may not have more than one field specified at a time"))
	}
	return errs
}

func validateKeyRef(name, key string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, dnsSubdomain(path.Child("name"), name)...)
	}
	if key == "" {
		errs = append(errs, field.Required(path.Child("key"), ""))
	} else {
		for _, m := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(path.Child("key"), key, m))
		}
	}
	return errs
}

var (
	envFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
		"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
	subscriptRE = regexp.MustCompile(`^([^\[]+)\['(.*)'\]$`)
)

func validateFieldRef(f *v1.ObjectFieldSelector, path *field.Path) field.ErrorList {
	if f.APIVersion == "" {
		return field.ErrorList{field.Required(path.Child("apiVersion"), "")}
	}
	if f.FieldPath == "" {
		return field.ErrorList{field.Required(path.Child("fieldPath"), "")}
	}
	if f.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(path.Child("fieldPath"), f.FieldPath, "error converting fieldPath: unsupported pod version: "+f.APIVersion)}
	}
	if m := subscriptRE.FindStringSubmatch(f.FieldPath); m != nil {
		switch m[1] {
		case "metadata.annotations":
			return qualifiedName(path, strings.ToLower(m[2]))
		case "metadata.labels":
			return qualifiedName(path, m[2])
		}
		return field.ErrorList{field.Invalid(path, m[1], "does not support subscript")}
	}
	for _, p := range envFieldPaths {
		if f.FieldPath == p {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path.Child("fieldPath"), f.FieldPath, envFieldPaths)}
}

var resourceFieldPaths = []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory",
	"requests.cpu", "requests.ephemeral-storage", "requests.memory"}

func validateResourceFieldRef(f *v1.ResourceFieldSelector, path *field.Path) field.ErrorList {
	if f.Resource == "" {
		return field.ErrorList{field.Required(path.Child("resource"), "")}
	}
	for _, r := range resourceFieldPaths {
		if f.Resource == r {
			return nil
		}
	}
	if strings.HasPrefix(f.Resource, "limits.hugepages-") || strings.HasPrefix(f.Resource, "requests.hugepages-") {
		return nil
	}
	return field.ErrorList{field.NotSupported(path.Child("resource"), f.Resource, resourceFieldPaths)}
}

func validateEnvFrom(from []v1.EnvFromSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range from {
		ip := path.Index(i)
		if f.Prefix != "" {
			for _, m := range validation.IsRelaxedEnvVarName(f.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("prefix"), f.Prefix, m))
			}
		}
		n := 0
		if f.ConfigMapRef != nil {
			n++
			errs = append(errs, dnsSubdomain(ip.Child("configMapRef", "name"), f.ConfigMapRef.Name)...)
		}
		if f.SecretRef != nil {
			n++
			errs = append(errs, dnsSubdomain(ip.Child("secretRef", "name"), f.SecretRef.Name)...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(path, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

// validateMounts: every mount names a volume that validated, has a unique
// mountPath and, for subPath, stays inside the volume.
func (cc *containerContext) validateMounts(c *v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	devNames, devPaths := map[string]bool{}, map[string]bool{}
	for _, d := range c.VolumeDevices {
		devNames[d.Name], devPaths[d.DevicePath] = true, true
	}
	mountPaths := map[string]bool{}
	for i, m := range c.VolumeMounts {
		ip := path.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if _, ok := cc.volumes[m.Name]; !ok {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if mountPaths[m.MountPath] {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPaths[m.MountPath] = true
		if devNames[m.Name] {
			errs = append(errs, field.Invalid(ip.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		if devPaths[m.MountPath] {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
		}
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, path.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, path.Child("subPathExpr"))...)
		}
		if m.MountPropagation != nil {
			errs = append(errs, validateMountPropagation(*m.MountPropagation, c, path.Child("mountPropagation"))...)
		}
		errs = append(errs, validateRecursiveReadOnly(m, path.Child("recursiveReadOnly"))...)
	}
	return errs
}

func validateMountPropagation(mp v1.MountPropagationMode, c *v1.Container, path *field.Path) field.ErrorList {
	errs := validateEnum(path, mp, v1.MountPropagationBidirectional, v1.MountPropagationHostToContainer, v1.MountPropagationNone)
	if len(errs) > 0 || mp != v1.MountPropagationBidirectional {
		return errs
	}
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		errs = append(errs, field.Forbidden(path, "Bidirectional mount propagation is available only to privileged containers"))
	}
	return errs
}

func validateRecursiveReadOnly(m v1.VolumeMount, path *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	errs := validateEnum(path, *m.RecursiveReadOnly, v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled)
	if len(errs) > 0 || *m.RecursiveReadOnly == v1.RecursiveReadOnlyDisabled {
		return errs
	}
	if !m.ReadOnly {
		errs = append(errs, field.Forbidden(path, "may only be specified when readOnly is true"))
	}
	if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
		errs = append(errs, field.Forbidden(path, "may only be specified when mountPropagation is None or not specified"))
	}
	return errs
}

func (cc *containerContext) validateDevices(c *v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, paths := map[string]bool{}, map[string]bool{}
	for i, d := range c.VolumeDevices {
		ip := path.Index(i)
		if d.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if names[d.Name] {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must be unique"))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(ip.Child("devicePath"), ""))
		}
		if paths[d.DevicePath] {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		names[d.Name], paths[d.DevicePath] = true, true
		vs, ok := cc.volumes[d.Name]
		switch {
		case !ok:
			errs = append(errs, field.NotFound(ip.Child("name"), d.Name))
		case vs.PersistentVolumeClaim == nil && vs.Ephemeral == nil:
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
	}
	return errs
}

func validateResizePolicy(policies []v1.ContainerResizePolicy, podRestart v1.RestartPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[v1.ResourceName]bool{}
	for i, p := range policies {
		if seen[p.ResourceName] {
			errs = append(errs, field.Duplicate(path.Index(i), p.ResourceName))
		}
		seen[p.ResourceName] = true
		errs = append(errs, validateEnum(path, p.ResourceName, v1.ResourceCPU, v1.ResourceMemory)...)
		errs = append(errs, validateEnum(path, p.RestartPolicy, v1.NotRequired, v1.RestartContainer)...)
		if podRestart == v1.RestartPolicyNever && p.RestartPolicy != v1.NotRequired {
			errs = append(errs, field.Invalid(path, p.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return errs
}

// validateSecurityContext: privileged is allowed (the kubelet runs with
// AllowPrivileged), so only the value checks remain.
func validateSecurityContext(sc *v1.SecurityContext, spec *v1.PodSpec, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.RunAsUser != nil {
		errs = append(errs, userID(path.Child("runAsUser"), *sc.RunAsUser)...)
	}
	if sc.RunAsGroup != nil {
		errs = append(errs, groupID(path.Child("runAsGroup"), *sc.RunAsGroup)...)
	}
	if sc.ProcMount != nil {
		errs = append(errs, validateEnum(path.Child("procMount"), *sc.ProcMount, v1.DefaultProcMount, v1.UnmaskedProcMount)...)
		hostUsers := spec.HostUsers == nil || *spec.HostUsers
		if hostUsers && *sc.ProcMount == v1.UnmaskedProcMount {
			errs = append(errs, field.Invalid(path.Child("procMount"), *sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, path.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(path, field.OmitValueType{}, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	if p := sc.AppArmorProfile; p != nil {
		errs = append(errs, validateEnum(path.Child("appArmorProfile", "type"), p.Type,
			v1.AppArmorProfileTypeLocalhost, v1.AppArmorProfileTypeRuntimeDefault, v1.AppArmorProfileTypeUnconfined)...)
		if p.Type == v1.AppArmorProfileTypeLocalhost && (p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "") {
			errs = append(errs, field.Required(path.Child("appArmorProfile", "localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
	}
	return errs
}
