package manifest

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// configHashAnnotation is added by the kubelet before validation; its
	// value is 32 hex characters. It counts toward the annotation size limit.
	configHashAnnotation = "kubernetes.io/config.hash"
	configHashLen        = 32

	mirrorPodAnnotation         = "kubernetes.io/config.mirror"
	tolerationsAnnotation       = "scheduler.alpha.kubernetes.io/tolerations"
	deletionCostAnnotation      = "controller.kubernetes.io/pod-deletion-cost"
	seccompPodAnnotation        = "seccomp.security.alpha.kubernetes.io/pod"
	seccompContainerAnnotation  = "container.seccomp.security.alpha.kubernetes.io/"
	appArmorContainerAnnotation = "container.apparmor.security.beta.kubernetes.io/"
)

// validateMeta checks metadata after the kubelet's defaulting: the name
// already carries the "-<node>" suffix, so a long base name or an odd node
// name fails here, as it does in the kubelet.
func validateMeta(pod *v1.Pod) field.ErrorList {
	meta := pod.ObjectMeta
	annotations := make(map[string]string, len(meta.Annotations)+1)
	for k, v := range meta.Annotations {
		annotations[k] = v
	}
	annotations[configHashAnnotation] = strings.Repeat("0", configHashLen)
	meta.Annotations = annotations

	errs := apivalidation.ValidateObjectMeta(&meta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return errs
}

var deletionCostRE = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)

// validatePodAnnotations covers the annotations with meaning for pods. Their
// values are never quoted back.
func validatePodAnnotations(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("metadata", "annotations")
	ann := pod.Annotations

	if _, ok := ann[mirrorPodAnnotation]; ok && pod.Spec.NodeName == "" {
		errs = append(errs, field.Invalid(path.Key(mirrorPodAnnotation), field.OmitValueType{}, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v := ann[tolerationsAnnotation]; v != "" {
		var ts []v1.Toleration
		if err := json.Unmarshal([]byte(v), &ts); err != nil {
			errs = append(errs, field.Invalid(path, tolerationsAnnotation, "not a JSON list of tolerations"))
		} else {
			errs = append(errs, validateTolerations(ts, path.Child(tolerationsAnnotation))...)
		}
	}
	if v, ok := ann[deletionCostAnnotation]; ok {
		if _, err := strconv.ParseInt(v, 10, 32); err != nil || !deletionCostRE.MatchString(v) {
			errs = append(errs, field.Invalid(path.Key(deletionCostAnnotation), field.OmitValueType{}, "must be a 32bit integer"))
		}
	}
	if p, ok := ann[seccompPodAnnotation]; ok {
		errs = append(errs, validateSeccompAnnotation(p, path.Child(seccompPodAnnotation))...)
	}
	for _, k := range sortedKeys(ann) {
		p := ann[k]
		if strings.HasPrefix(k, seccompContainerAnnotation) {
			errs = append(errs, validateSeccompAnnotation(p, path.Child(k))...)
		}
		if name, ok := strings.CutPrefix(k, appArmorContainerAnnotation); ok {
			if !hasContainer(&pod.Spec, name) {
				errs = append(errs, field.Invalid(path.Key(k), name, "container not found"))
			}
			if p != "" && p != "runtime/default" && p != "unconfined" && !strings.HasPrefix(p, "localhost/") {
				errs = append(errs, field.Invalid(path.Key(k), field.OmitValueType{}, "invalid AppArmor profile name"))
			}
		}
	}
	return errs
}

func validateSeccompAnnotation(p string, path *field.Path) field.ErrorList {
	switch {
	case p == "runtime/default", p == "docker/default", p == "unconfined":
		return nil
	case strings.HasPrefix(p, "localhost/"):
		if errs := validateLocalDescendingPath(strings.TrimPrefix(p, "localhost/"), path); len(errs) > 0 {
			return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "must be a relative path without '..'")}
		}
		return nil
	}
	return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "must be a valid seccomp profile")}
}

func hasContainer(spec *v1.PodSpec, name string) bool {
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// validateSeccompMatch requires the deprecated seccomp annotations to agree
// with the securityContext fields when both are set.
func validateSeccompMatch(pod *v1.Pod, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := pod.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if a, ok := pod.Annotations[seccompPodAnnotation]; ok {
			if e := seccompMismatch(a, sc.SeccompProfile, spec.Child("securityContext", "seccompProfile")); e != nil {
				errs = append(errs, e)
			}
		}
	}
	visitContainers(&pod.Spec, spec, func(c *v1.Container, path *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			return
		}
		if a, ok := pod.Annotations[seccompContainerAnnotation+c.Name]; ok {
			if e := seccompMismatch(a, c.SecurityContext.SeccompProfile, path.Child("securityContext", "seccompProfile")); e != nil {
				errs = append(errs, e)
			}
		}
	})
	errs = append(errs, validateAppArmorMatch(pod, spec)...)
	return errs
}

func seccompMismatch(a string, p *v1.SeccompProfile, path *field.Path) *field.Error {
	switch p.Type {
	case v1.SeccompProfileTypeUnconfined:
		if a != "unconfined" {
			return field.Forbidden(path.Child("type"), "seccomp type in annotation and field must match")
		}
	case v1.SeccompProfileTypeRuntimeDefault:
		if a != "runtime/default" && a != "docker/default" {
			return field.Forbidden(path.Child("type"), "seccomp type in annotation and field must match")
		}
	case v1.SeccompProfileTypeLocalhost:
		if !strings.HasPrefix(a, "localhost/") {
			return field.Forbidden(path.Child("type"), "seccomp type in annotation and field must match")
		}
		if p.LocalhostProfile == nil || strings.TrimPrefix(a, "localhost/") != *p.LocalhostProfile {
			return field.Forbidden(path.Child("localhostProfile"), "seccomp profile in annotation and field must match")
		}
	}
	return nil
}

func validateAppArmorMatch(pod *v1.Pod, spec *field.Path) field.ErrorList {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == v1.Windows {
		return nil
	}
	var podProfile *v1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	var errs field.ErrorList
	visitContainers(&pod.Spec, spec, func(c *v1.Container, path *field.Path) {
		profile := podProfile
		if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			profile = c.SecurityContext.AppArmorProfile
		}
		a, ok := pod.Annotations[appArmorContainerAnnotation+c.Name]
		if profile == nil || !ok {
			return
		}
		p := path.Child("securityContext", "appArmorProfile")
		mismatch := field.Forbidden(p.Child("type"), "apparmor type in annotation and field must match")
		switch profile.Type {
		case v1.AppArmorProfileTypeUnconfined:
			if a != "unconfined" {
				errs = append(errs, mismatch)
			}
		case v1.AppArmorProfileTypeRuntimeDefault:
			if a != "runtime/default" {
				errs = append(errs, mismatch)
			}
		case v1.AppArmorProfileTypeLocalhost:
			if !strings.HasPrefix(a, "localhost/") {
				errs = append(errs, mismatch)
			} else if profile.LocalhostProfile == nil || strings.TrimPrefix(a, "localhost/") != *profile.LocalhostProfile {
				errs = append(errs, field.Forbidden(p.Child("localhostProfile"), "apparmor profile in annotation and field must match"))
			}
		}
	})
	return errs
}

// visitContainers walks init, regular and ephemeral containers in the
// kubelet's order with their field paths.
func visitContainers(spec *v1.PodSpec, path *field.Path, fn func(*v1.Container, *field.Path)) {
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i], path.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i], path.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		fn((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), path.Child("ephemeralContainers").Index(i))
	}
}
