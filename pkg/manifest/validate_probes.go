package manifest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func (cc *containerContext) validateProbes(c *v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p := c.LivenessProbe; p != nil {
		lp := path.Child("livenessProbe")
		errs = append(errs, cc.validateProbe(p, lp)...)
		if p.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(lp.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
		}
	}
	if p := c.ReadinessProbe; p != nil {
		rp := path.Child("readinessProbe")
		errs = append(errs, cc.validateProbe(p, rp)...)
		if p.TerminationGracePeriodSeconds != nil {
			errs = append(errs, field.Invalid(rp.Child("terminationGracePeriodSeconds"), *p.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	if p := c.StartupProbe; p != nil {
		sp := path.Child("startupProbe")
		errs = append(errs, cc.validateProbe(p, sp)...)
		if p.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(sp.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
		}
	}
	return errs
}

func (cc *containerContext) validateProbe(p *v1.Probe, path *field.Path) field.ErrorList {
	h := p.ProbeHandler
	errs := cc.validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, h.GRPC, nil, path)
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds},
		{"periodSeconds", p.PeriodSeconds}, {"successThreshold", p.SuccessThreshold},
		{"failureThreshold", p.FailureThreshold},
	} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.v, "must be greater than or equal to 0"))
		}
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

func (cc *containerContext) validateLifecycle(l *v1.Lifecycle, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h := l.PostStart; h != nil {
		errs = append(errs, cc.validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, path.Child("postStart"))...)
	}
	if h := l.PreStop; h != nil {
		errs = append(errs, cc.validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, path.Child("preStop"))...)
	}
	return errs
}

// validateHandler requires exactly one action. Exec commands are checked for
// presence only, never quoted.
func (cc *containerContext) validateHandler(exec *v1.ExecAction, get *v1.HTTPGetAction, tcp *v1.TCPSocketAction,
	grpc *v1.GRPCAction, sleep *v1.SleepAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(present bool, name string, check func() field.ErrorList) {
		if !present {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(path.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, check()...)
	}
	one(exec != nil, "exec", func() field.ErrorList {
		if len(exec.Command) == 0 {
			return field.ErrorList{field.Required(path.Child("exec", "command"), "")}
		}
		return nil
	})
	one(get != nil, "httpGet", func() field.ErrorList { return validateHTTPGet(get, path.Child("httpGet")) })
	one(tcp != nil, "tcpSocket", func() field.ErrorList { return validatePortNumOrName(tcp.Port, path.Child("tcpSocket", "port")) })
	one(grpc != nil, "grpc", func() field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(grpc.Port), path.Child("grpc", "port"))
	})
	one(sleep != nil, "sleep", func() field.ErrorList {
		g := cc.spec.TerminationGracePeriodSeconds
		if g != nil && (sleep.Seconds < 0 || sleep.Seconds > *g) {
			return field.ErrorList{field.Invalid(path.Child("sleep"), sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *g))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(path, "must specify a handler type"))
	}
	return errs
}

func validateHTTPGet(h *v1.HTTPGetAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(path.Child("path"), ""))
	}
	errs = append(errs, validatePortNumOrName(h.Port, path.Child("port"))...)
	if h.Scheme != v1.URISchemeHTTP && h.Scheme != v1.URISchemeHTTPS {
		errs = append(errs, field.NotSupported(path.Child("scheme"), h.Scheme, []v1.URIScheme{v1.URISchemeHTTP, v1.URISchemeHTTPS}))
	}
	for _, hd := range h.HTTPHeaders {
		for _, m := range validation.IsHTTPHeaderName(hd.Name) {
			errs = append(errs, field.Invalid(path.Child("httpHeaders"), hd.Name, m))
		}
	}
	if p := h.Protocol; p != nil {
		switch {
		case *p != v1.HTTPProtocolHTTP1 && *p != v1.HTTPProtocolHTTP2:
			errs = append(errs, field.NotSupported(path.Child("protocol"), *p, []v1.HTTPProtocol{v1.HTTPProtocolHTTP1, v1.HTTPProtocolHTTP2}))
		case *p == v1.HTTPProtocolHTTP2 && h.Scheme != v1.URISchemeHTTP:
			errs = append(errs, field.Invalid(path.Child("protocol"), *p, "is only supported with HTTP (H2C)"))
		case *p == v1.HTTPProtocolHTTP2 && h.Host != "":
			errs = append(errs, field.Invalid(path.Child("host"), h.Host, "must be empty when `protocol` is \"HTTP2\""))
		}
	}
	return errs
}

func validatePortNumOrName(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == intstr.Int {
		for _, m := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(path, port.IntValue(), m))
		}
		return errs
	}
	for _, m := range validation.IsValidPortName(port.StrVal) {
		errs = append(errs, field.Invalid(path, port.StrVal, m))
	}
	return errs
}
