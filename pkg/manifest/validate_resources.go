package manifest

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResourceRequirements: names must be standard container resources
// or extended (domain-qualified) ones, quantities non-negative (integers for
// extended resources), requests at most limits, and equal to them for
// resources that cannot be overcommitted (hugepages, extended resources).
func validateResourceRequirements(r *v1.ResourceRequirements, claims map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := path.Child("limits"), path.Child("requests")
	cpuOrMem, huge := false, false
	for _, name := range sortedKeys(r.Limits) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		errs = append(errs, validateContainerResourceName(name, p)...)
		errs = append(errs, validateQuantity(name, q, p)...)
		if isHugePages(name) {
			huge = true
			errs = append(errs, validateHugePageQuantity(name, q, p)...)
		}
		cpuOrMem = cpuOrMem || name == v1.ResourceCPU || name == v1.ResourceMemory
	}
	for _, name := range sortedKeys(r.Requests) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		errs = append(errs, validateContainerResourceName(name, p)...)
		errs = append(errs, validateQuantity(name, q, p)...)
		if lim, ok := r.Limits[name]; ok {
			if q.Cmp(lim) != 0 && !overcommitAllowed(name) {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
			} else if q.Cmp(lim) > 0 {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
			}
		} else if !overcommitAllowed(name) {
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(name) {
			huge = true
			errs = append(errs, validateHugePageQuantity(name, q, p)...)
		}
		cpuOrMem = cpuOrMem || name == v1.ResourceCPU || name == v1.ResourceMemory
	}
	if huge && !cpuOrMem {
		errs = append(errs, field.Forbidden(path, "HugePages require cpu or memory"))
	}
	seen := map[string]bool{}
	for i, c := range r.Claims {
		p := path.Child("claims").Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p, ""))
			continue
		case seen[c.Name+"/"+c.Request]:
			errs = append(errs, field.Duplicate(p, c.Name))
		}
		seen[c.Name+"/"+c.Request] = true
		if !claims[c.Name] {
			e := field.NotFound(p, c.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			errs = append(errs, e)
		}
	}
	return errs
}

// validatePodResources covers pod-level resources (PodLevelResources is on
// by default): only cpu, memory and hugepages may be set there.
func validatePodResources(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	if spec.OS != nil && spec.OS.Name == v1.Windows {
		return field.ErrorList{field.Forbidden(path, "may not be set for a windows pod")}
	}
	var errs field.ErrorList
	if spec.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(path.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	for _, l := range []struct {
		list v1.ResourceList
		path *field.Path
	}{{spec.Resources.Limits, path.Child("limits")}, {spec.Resources.Requests, path.Child("requests")}} {
		for _, name := range sortedKeys(l.list) {
			if name != v1.ResourceCPU && name != v1.ResourceMemory && !isHugePages(name) {
				errs = append(errs, field.NotSupported(l.path, name, []string{"cpu", "memory", "hugepages-*"}))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return validateResourceRequirements(&v1.ResourceRequirements{Limits: spec.Resources.Limits, Requests: spec.Resources.Requests}, nil, path)
}

func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

func isNative(name v1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/")
}

func overcommitAllowed(name v1.ResourceName) bool { return isNative(name) && !isHugePages(name) }

func isExtended(name v1.ResourceName) bool {
	if isNative(name) || strings.HasPrefix(string(name), "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+string(name))) == 0
}

func validateContainerResourceName(name v1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, m))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") {
		switch {
		case name == v1.ResourceCPU, name == v1.ResourceMemory, name == v1.ResourceEphemeralStorage, isHugePages(name):
		default:
			return field.ErrorList{field.Invalid(path, name, "must be a standard resource for containers")}
		}
	} else if !isNative(name) && !isExtended(name) {
		return field.ErrorList{field.Invalid(path, name, "doesn't follow extended resource name standard")}
	}
	return nil
}

func validateQuantity(name v1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be greater than or equal to 0"))
	}
	if isExtended(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be an integer"))
	}
	return errs
}

// validateHugePageQuantity: the amount must be a whole number of pages of
// a valid page size.
func validateHugePageQuantity(name v1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), v1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.MilliValue()%1000 != 0 || q.Value()%size.Value() != 0 {
		return field.ErrorList{field.Invalid(path, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name))}
	}
	return nil
}
