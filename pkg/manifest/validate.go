package manifest

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePod runs the checks of the kubelet's ValidatePodCreate that can
// fail for a static pod, in the kubelet's order so that the first error is
// the one the kubelet would list first.
func validatePod(pod *v1.Pod) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateMeta(pod)
	errs = append(errs, validatePodAnnotations(pod)...)
	errs = append(errs, validateSpec(&pod.Spec, &pod.ObjectMeta, spec)...)

	if pod.Spec.ServiceAccountName == "" {
		for i, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for j, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(spec.Child("volumes").Index(i).Child("projected", "sources").Index(j).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(spec.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateImageWhitespace(pod.Spec.Containers, spec.Child("containers"))...)
	errs = append(errs, validateImageWhitespace(pod.Spec.InitContainers, spec.Child("initContainers"))...)

	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(spec.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		errs = append(errs, field.Forbidden(spec.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	errs = append(errs, validateSeccompMatch(pod, spec)...)
	return errs
}

func validateImageWhitespace(cs []v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		if len(c.Image) != len(strings.TrimSpace(c.Image)) {
			errs = append(errs, field.Invalid(path.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs
}

// maxListedErrors bounds the validation errors one message spells out: a
// file can hold hundreds of thousands of bad fields, and the first few say
// what is wrong.
const maxListedErrors = 5

// fieldErrors turns validation errors into one *Error at the first error's
// line, with any value that might be secret removed from the text.
func (d *decoder) fieldErrors(pod *v1.Pod, errs field.ErrorList) *Error {
	secrets := sensitiveStrings(pod)
	listed := errs[:min(len(errs), maxListedErrors)]
	msgs := make([]string, 0, len(listed)+1)
	for _, e := range listed {
		msgs = append(msgs, redact(e.Error(), secrets))
	}
	if more := len(errs) - len(listed); more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more errors", more))
	}
	return &Error{Line: lineOf(d.root, errs[0].Field), Msg: strings.Join(msgs, "; "), Err: errs.ToAggregate()}
}

// minSecretLen keeps redaction from blanking out short, common words that a
// message legitimately contains.
const minSecretLen = 6

// sensitiveStrings lists values no message may show: env values, commands,
// arguments, annotation values and HTTP header values.
func sensitiveStrings(pod *v1.Pod) []string {
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			if len(s) >= minSecretLen {
				out = append(out, s)
			}
		}
	}
	for _, v := range pod.Annotations {
		add(v)
	}
	handler := func(exec *v1.ExecAction, get *v1.HTTPGetAction) {
		if exec != nil {
			add(exec.Command...)
		}
		if get != nil {
			for _, h := range get.HTTPHeaders {
				add(h.Value)
			}
		}
	}
	visit := func(c *v1.Container) {
		add(c.Command...)
		add(c.Args...)
		for _, e := range c.Env {
			add(e.Value)
		}
		for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p != nil {
				handler(p.Exec, p.HTTPGet)
			}
		}
		if c.Lifecycle != nil {
			for _, h := range []*v1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
				if h != nil {
					handler(h.Exec, h.HTTPGet)
				}
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		visit((*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return out
}

// Redact removes from msg every value of pod that no podwatch message may
// show (env values, commands, arguments, annotation and HTTP header
// values, as for validation errors), longest first so that a value holding
// another goes whole. It is for text podwatch did not write, such as the
// kubelet's status of a container, whose termination message may echo
// the container's arguments or environment.
func Redact(msg string, pod *v1.Pod) string {
	if pod == nil || msg == "" {
		return msg
	}
	secrets := sensitiveStrings(pod)
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return redact(msg, secrets)
}

// redact is a safety net behind the validators, which already avoid
// quoting sensitive fields.
func redact(msg string, secrets []string) string {
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}
